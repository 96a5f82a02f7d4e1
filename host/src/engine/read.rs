//! The read side of `recall serve`: [`ReadCatalog`] over the on-disk store
//! and its shard arena ([`StoreCatalog`]).

use super::served::{ReadCatalog, SegmentListing, SegmentSummary};
use super::EngineError;
use crate::engine::catalog::StoreCatalog;
use crate::store::manifest;
use crate::store::StoreError;
use recall_core::model::Manifest;
use recall_core::{Catalog, Query, QueryError, Response, SearchEnv};
use std::io;
use std::sync::Arc;

fn err(e: StoreError) -> EngineError {
    EngineError::unavailable(e.to_string())
}

impl ReadCatalog for StoreCatalog {
    fn catalog(&self) -> &dyn Catalog {
        self
    }

    fn manifest(&self) -> Result<Arc<Manifest>, EngineError> {
        self.store().current().map_err(err)
    }

    fn manifest_bytes(&self) -> Result<Vec<u8>, EngineError> {
        // Assembled from the catalog and its metas, serialized once per
        // revision: the `manifest.json` shape the browser reads.
        let store = self.store();
        match store.manifest_bytes().map_err(err)? {
            Some(b) => Ok(b),
            None => {
                let m = store.current().map_err(err)?;
                manifest::to_bytes(&m).map_err(|e| EngineError::unavailable(e.to_string()))
            }
        }
    }

    fn generation(&self, name: &str) -> Result<Option<Vec<u8>>, EngineError> {
        let Some(path) = self.store().generation_path(name) else {
            return Ok(None);
        };
        match std::fs::read(path) {
            Ok(b) => Ok(Some(b)),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(EngineError::unavailable(format!(
                "cannot read a generation: {e}"
            ))),
        }
    }

    fn segment_list(&self) -> Result<SegmentListing, EngineError> {
        let list = self.store().segment_list().map_err(err)?;
        Ok(SegmentListing {
            store_id: list.store_id,
            revision: list.revision,
            segments: list
                .segments
                .into_iter()
                .map(|s| SegmentSummary {
                    name: s.name,
                    generations: s.generations,
                    source_bytes: s.source_bytes,
                })
                .collect(),
        })
    }

    fn segment(&self, name: &str) -> Result<Option<Vec<u8>>, EngineError> {
        self.store().segment_bytes(name).map_err(err)
    }

    fn search(
        &self,
        query: &Query,
        host: Option<&str>,
        env: &SearchEnv<'_>,
    ) -> Result<Response, QueryError> {
        crate::engine::served::no_host_filter(host)?;
        let r = recall_core::search(query, &self.own(env));
        self.after_search();
        r
    }
}
