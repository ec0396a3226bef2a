//! What the SQL engine's integration tests share: a catalog's sample source that knows no
//! Portable class, and an empty Compact schema registry.

use ferrogrid_sql::catalog::Samples;
use ferrogrid_sql::SqlType;
use std::collections::HashMap;

pub struct NoSamples;

impl Samples for NoSamples {
    fn portable_fields(&self, _factory: i32, _class: i32, _version: i32) -> Option<Vec<(String, SqlType)>> {
        None
    }
}

pub fn schemas() -> HashMap<i64, ferrogrid_query::schema::Schema> {
    HashMap::new()
}
