//! One message's bytes through `Message::parse` and every codec. See `parse_and_decode`.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    ferrogrid_protocol_fuzz::parse_and_decode(data);
});
