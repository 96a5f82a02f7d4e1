//! The shipped `.wasm` in wasmtime, driven through the core's byte ABI
//! (`recall_alloc`, `recall_free`, `recall_index_new`, `recall_set_manifest`,
//! `recall_add_generation`, `recall_add_segment`, `recall_search`,
//! `recall_search_lazy`, `recall_session_query`, `recall_views`,
//! `recall_last_error`; see
//! `wasm/src/abi.rs` in recall-wasm). The JS imports wasm-bindgen adds are defined as
//! traps: the byte ABI never calls them.

use super::ParityError;
use std::path::Path;
use wasmtime::{Config, Engine, Instance, Linker, Memory, Module, Store, TypedFunc};

/// One wasm instance holding one index.
pub struct WasmIndex {
    store: Store<()>,
    memory: Memory,
    alloc: TypedFunc<u32, u32>,
    free: TypedFunc<(u32, u32), ()>,
    set_manifest: TypedFunc<(u32, u32, u32), i32>,
    add_generation: TypedFunc<(u32, u32, u32, u32, u32), i32>,
    search: TypedFunc<(u32, u32, u32), i64>,
    add_segment: TypedFunc<(u32, u32, u32, u32, u32), i32>,
    search_lazy: TypedFunc<(u32, u32, u32, u32), i64>,
    session_query: TypedFunc<(u32, u32, u32, u32, u32), i64>,
    views: TypedFunc<(u32, u32, u32), i64>,
    last_error: TypedFunc<(), i64>,
    new: TypedFunc<(), u32>,
    drop_index: TypedFunc<u32, ()>,
    handle: u32,
}

fn wasm_err(context: &str) -> impl Fn(wasmtime::Error) -> ParityError + '_ {
    move |e| ParityError::Wasm(format!("{context}: {e:?}"))
}

impl WasmIndex {
    /// Compiles and instantiates the module at `path` and creates an index.
    pub fn load(path: &Path) -> Result<WasmIndex, ParityError> {
        let bytes = std::fs::read(path)
            .map_err(|e| ParityError::Wasm(format!("cannot read {}: {e}", path.display())))?;
        let mut config = Config::new();
        config.wasm_reference_types(true);
        let engine = Engine::new(&config).map_err(wasm_err("engine"))?;
        let module = Module::new(&engine, &bytes).map_err(wasm_err("compile"))?;
        let mut linker: Linker<()> = Linker::new(&engine);
        linker
            .define_unknown_imports_as_traps(&module)
            .map_err(wasm_err("imports"))?;
        let mut store = Store::new(&engine, ());
        let instance: Instance = linker
            .instantiate(&mut store, &module)
            .map_err(wasm_err("instantiate"))?;
        let memory = instance
            .get_memory(&mut store, "memory")
            .ok_or_else(|| ParityError::Wasm("the module exports no memory".into()))?;
        macro_rules! func {
            ($name:literal) => {
                instance
                    .get_typed_func(&mut store, $name)
                    .map_err(wasm_err($name))?
            };
        }
        let new: TypedFunc<(), u32> = func!("recall_index_new");
        let mut w = WasmIndex {
            alloc: func!("recall_alloc"),
            free: func!("recall_free"),
            set_manifest: func!("recall_set_manifest"),
            add_generation: func!("recall_add_generation"),
            search: func!("recall_search"),
            add_segment: func!("recall_add_segment"),
            search_lazy: func!("recall_search_lazy"),
            session_query: func!("recall_session_query"),
            views: func!("recall_views"),
            last_error: func!("recall_last_error"),
            new: new.clone(),
            drop_index: func!("recall_index_free"),
            memory,
            handle: 0,
            store,
        };
        w.handle = new
            .call(&mut w.store, ())
            .map_err(wasm_err("recall_index_new"))?;
        Ok(w)
    }

    /// Frees this instance's index and starts an empty one in the same
    /// instance (a fresh page without compiling the module again).
    pub fn reset(&mut self) -> Result<(), ParityError> {
        self.drop_index
            .call(&mut self.store, self.handle)
            .map_err(wasm_err("recall_index_free"))?;
        self.handle = self
            .new
            .call(&mut self.store, ())
            .map_err(wasm_err("recall_index_new"))?;
        Ok(())
    }

    /// Copies `bytes` into a fresh module buffer; returns its pointer.
    fn put(&mut self, bytes: &[u8]) -> Result<u32, ParityError> {
        let len = u32::try_from(bytes.len())
            .map_err(|_| ParityError::Wasm("input larger than 4 GiB".into()))?;
        let ptr = self
            .alloc
            .call(&mut self.store, len)
            .map_err(wasm_err("recall_alloc"))?;
        self.memory
            .write(&mut self.store, ptr as usize, bytes)
            .map_err(|e| ParityError::Wasm(format!("write: {e}")))?;
        Ok(ptr)
    }

    fn release(&mut self, ptr: u32, len: usize) -> Result<(), ParityError> {
        self.free
            .call(&mut self.store, (ptr, len as u32))
            .map_err(wasm_err("recall_free"))
    }

    /// Reads the `(ptr << 32) | len` region `packed`.
    fn read(&self, packed: i64) -> Result<Vec<u8>, ParityError> {
        let packed = packed as u64;
        let (ptr, len) = ((packed >> 32) as usize, (packed & 0xFFFF_FFFF) as usize);
        self.memory
            .data(&self.store)
            .get(ptr..ptr + len)
            .map(<[u8]>::to_vec)
            .ok_or_else(|| ParityError::Wasm(format!("output {ptr}+{len} outside memory")))
    }

    fn check(&mut self, code: i32, what: &str) -> Result<(), ParityError> {
        if code == 0 {
            return Ok(());
        }
        let packed = self
            .last_error
            .call(&mut self.store, ())
            .map_err(wasm_err("recall_last_error"))?;
        let msg = String::from_utf8_lossy(&self.read(packed)?).into_owned();
        Err(ParityError::Wasm(format!("{what} refused ({code}): {msg}")))
    }

    /// Sets the manifest.
    pub fn set_manifest(&mut self, bytes: &[u8]) -> Result<(), ParityError> {
        let ptr = self.put(bytes)?;
        let code = self
            .set_manifest
            .call(&mut self.store, (self.handle, ptr, bytes.len() as u32))
            .map_err(wasm_err("recall_set_manifest"))?;
        self.release(ptr, bytes.len())?;
        self.check(code, "manifest")
    }

    /// Adds a generation file.
    pub fn add_generation(&mut self, name: &str, bytes: &[u8]) -> Result<(), ParityError> {
        let n = self.put(name.as_bytes())?;
        let ptr = self.put(bytes)?;
        let args = (self.handle, n, name.len() as u32, ptr, bytes.len() as u32);
        let code = self
            .add_generation
            .call(&mut self.store, args)
            .map_err(wasm_err("recall_add_generation"))?;
        self.release(ptr, bytes.len())?;
        self.release(n, name.len())?;
        self.check(code, name)
    }

    /// Adds a store segment.
    pub fn add_segment(&mut self, name: &str, bytes: &[u8]) -> Result<(), ParityError> {
        let n = self.put(name.as_bytes())?;
        let ptr = self.put(bytes)?;
        let args = (self.handle, n, name.len() as u32, ptr, bytes.len() as u32);
        let code = self
            .add_segment
            .call(&mut self.store, args)
            .map_err(wasm_err("recall_add_segment"))?;
        self.release(ptr, bytes.len())?;
        self.release(n, name.len())?;
        self.check(code, name)
    }

    /// One lazy search step: request JSON in, the response or
    /// `{"need":[…]}` out.
    pub fn search_lazy_json(
        &mut self,
        request: &str,
        max_need: u32,
    ) -> Result<String, ParityError> {
        let ptr = self.put(request.as_bytes())?;
        let args = (self.handle, max_need, ptr, request.len() as u32);
        let packed = self
            .search_lazy
            .call(&mut self.store, args)
            .map_err(wasm_err("recall_search_lazy"))?;
        self.release(ptr, request.len())?;
        if packed == 0 {
            return Err(ParityError::Wasm(
                "recall_search_lazy: unknown handle".into(),
            ));
        }
        let out = self.read(packed)?;
        let len = (packed as u64 & 0xFFFF_FFFF) as usize;
        self.release((packed as u64 >> 32) as u32, len)?;
        String::from_utf8(out).map_err(|e| ParityError::Wasm(format!("output is not UTF-8: {e}")))
    }

    /// Runs one search: request JSON in, response JSON out.
    pub fn search_json(&mut self, request: &str) -> Result<String, ParityError> {
        let ptr = self.put(request.as_bytes())?;
        let packed = self
            .search
            .call(&mut self.store, (self.handle, ptr, request.len() as u32))
            .map_err(wasm_err("recall_search"))?;
        self.release(ptr, request.len())?;
        if packed == 0 {
            return Err(ParityError::Wasm("recall_search: unknown handle".into()));
        }
        let out = self.read(packed)?;
        let len = (packed as u64 & 0xFFFF_FFFF) as usize;
        self.release((packed as u64 >> 32) as u32, len)?;
        String::from_utf8(out).map_err(|e| ParityError::Wasm(format!("output is not UTF-8: {e}")))
    }

    /// Runs one one-session query over generation `name`: JSON in, JSON out.
    pub fn session_query_json(&mut self, name: &str, request: &str) -> Result<String, ParityError> {
        let n = self.put(name.as_bytes())?;
        let ptr = self.put(request.as_bytes())?;
        let args = (self.handle, n, name.len() as u32, ptr, request.len() as u32);
        let packed = self
            .session_query
            .call(&mut self.store, args)
            .map_err(wasm_err("recall_session_query"))?;
        self.release(ptr, request.len())?;
        self.release(n, name.len())?;
        if packed == 0 {
            return Err(ParityError::Wasm(
                "recall_session_query: unknown handle".into(),
            ));
        }
        let out = self.read(packed)?;
        let len = (packed as u64 & 0xFFFF_FFFF) as usize;
        self.release((packed as u64 >> 32) as u32, len)?;
        String::from_utf8(out).map_err(|e| ParityError::Wasm(format!("output is not UTF-8: {e}")))
    }

    /// Runs one view query (session list, session view, lineage): JSON in,
    /// JSON out.
    pub fn views_json(&mut self, request: &str) -> Result<String, ParityError> {
        let ptr = self.put(request.as_bytes())?;
        let args = (self.handle, ptr, request.len() as u32);
        let packed = self
            .views
            .call(&mut self.store, args)
            .map_err(wasm_err("recall_views"))?;
        self.release(ptr, request.len())?;
        if packed == 0 {
            return Err(ParityError::Wasm("recall_views: unknown handle".into()));
        }
        let out = self.read(packed)?;
        let len = (packed as u64 & 0xFFFF_FFFF) as usize;
        self.release((packed as u64 >> 32) as u32, len)?;
        String::from_utf8(out).map_err(|e| ParityError::Wasm(format!("output is not UTF-8: {e}")))
    }
}
