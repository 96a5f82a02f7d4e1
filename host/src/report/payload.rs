//! The report's data: `{"manifest": "<manifest JSON>", "generations":
//! [["<name>", "<exact shard JSON>"], …], "query": "<q>"|null}`, gzip'd and
//! base64'd. Shards travel as JSON strings so the viewer gets back their
//! exact bytes, which the core checks against their content-hash names.

use super::ReportError;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use flate2::write::GzEncoder;
use flate2::Compression;
use recall_core::model::Manifest;
use serde::Serialize;
use std::io::Write;

/// What a report carries.
#[derive(Debug, Serialize)]
pub struct Payload {
    /// The manifest (only the report's sessions), as JSON text.
    pub manifest: String,
    /// `(generation file name, exact shard JSON)`.
    pub generations: Vec<(String, String)>,
    /// The query the report was made for, pre-filled in the viewer.
    pub query: Option<String>,
}

impl Payload {
    /// Builds a payload from a manifest and its generation files' bytes.
    pub fn new(
        manifest: &Manifest,
        generations: Vec<(String, Vec<u8>)>,
        query: Option<String>,
    ) -> Result<Payload, ReportError> {
        let manifest =
            serde_json::to_string(manifest).map_err(|e| ReportError::Encode(e.to_string()))?;
        let generations = generations
            .into_iter()
            .map(|(name, bytes)| {
                String::from_utf8(bytes)
                    .map(|body| (name.clone(), body))
                    .map_err(|_| ReportError::Encode(format!("generation {name} is not UTF-8")))
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Payload {
            manifest,
            generations,
            query,
        })
    }

    /// gzip + base64 of the payload JSON.
    pub fn encode(&self) -> Result<String, ReportError> {
        let json = serde_json::to_vec(self).map_err(|e| ReportError::Encode(e.to_string()))?;
        gzip_base64(&json)
    }
}

/// gzip (best compression) then standard base64.
pub fn gzip_base64(bytes: &[u8]) -> Result<String, ReportError> {
    let mut gz = GzEncoder::new(Vec::new(), Compression::best());
    gz.write_all(bytes)
        .and_then(|_| gz.finish())
        .map(|z| STANDARD.encode(z))
        .map_err(|e| ReportError::Encode(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use flate2::read::GzDecoder;
    use std::io::Read;

    #[test]
    fn round_trips_exact_shard_bytes() {
        let m = Manifest::empty("s".into(), 1);
        let body = br#"{"session":{"title":"\u00e9 <script>"},"records":[]}"#.to_vec();
        let p = Payload::new(
            &m,
            vec![("0123456789abcdef.json".into(), body.clone())],
            Some("q".into()),
        )
        .unwrap();
        let z = STANDARD.decode(p.encode().unwrap()).unwrap();
        let mut json = String::new();
        GzDecoder::new(&z[..]).read_to_string(&mut json).unwrap();
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        assert_eq!(
            v["generations"][0][1].as_str().unwrap().as_bytes(),
            &body[..]
        );
        assert_eq!(v["query"], "q");
        let back: Manifest = serde_json::from_str(v["manifest"].as_str().unwrap()).unwrap();
        assert_eq!(back, m);
    }

    #[test]
    fn refuses_non_utf8_shards() {
        let m = Manifest::empty("s".into(), 1);
        assert!(Payload::new(&m, vec![("x.json".into(), vec![0xff])], None).is_err());
    }
}
