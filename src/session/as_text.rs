//! Serde for values whose text form is their command-line form (a device
//! `GPU-3f2a…`, inputs `uniform,rising`): written as that text, read back
//! through the same parser, so a job sent to a worker means what the
//! command line meant. `#[serde(with = "crate::session::as_text")]`.

use std::fmt::Display;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serializer};

pub fn serialize<T: Display, S: Serializer>(value: &T, s: S) -> Result<S::Ok, S::Error> {
    s.collect_str(value)
}

pub fn deserialize<'de, T, D>(d: D) -> Result<T, D::Error>
where
    T: FromStr,
    T::Err: Display,
    D: Deserializer<'de>,
{
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}
