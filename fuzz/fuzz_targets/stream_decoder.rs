//! A connection's inbound bytes through the stream decoder, then every codec. See `drive_stream`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ferrogrid_protocol_fuzz::drive_stream(data);
});
