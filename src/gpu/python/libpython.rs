//! libpython, loaded with dlopen into this (the GPU worker's) process and
//! driven through a handful of stable C-API functions. Everything else is
//! Python: the bridge module (python/attnscope_bridge.py) is executed from
//! attnscope's own copy and called with ints and strings only.

use std::ffi::{CString, c_char, c_int, c_long, c_void};
use std::path::Path;

use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW, Symbol};

type Obj = *mut c_void;

/// `Py_file_input`: the start symbol of a module's source.
const FILE_INPUT: c_int = 257;

macro_rules! api {
    ($($field:ident: $name:literal fn($($arg:ty),*) $(-> $ret:ty)?;)*) => {
        /// The C-API functions used, resolved once.
        pub(super) struct Api {
            // Kept loaded for as long as the functions are used (forever).
            _lib: Library,
            $($field: unsafe extern "C" fn($($arg),*) $(-> $ret)?,)*
        }

        impl Api {
            fn open(path: &Path) -> Result<Api, String> {
                // GLOBAL: torch's extension modules resolve libpython's
                // symbols from the process, as they would in `python`.
                // SAFETY: loading libpython runs no user code.
                let lib = unsafe { Library::open(Some(path), RTLD_NOW | RTLD_GLOBAL) }
                    .map_err(|e| format!("cannot load {}: {e}", path.display()))?;
                $(
                    // SAFETY: the signature is the documented C-API one.
                    let $field = unsafe {
                        let s: Symbol<unsafe extern "C" fn($($arg),*) $(-> $ret)?> =
                            lib.get(concat!($name, "\0").as_bytes()).map_err(|e| {
                                format!("{} lacks {}: {e}", path.display(), $name)
                            })?;
                        *s
                    };
                )*
                Ok(Api { _lib: lib, $($field,)* })
            }
        }
    };
}

api! {
    initialize_ex: "Py_InitializeEx" fn(c_int);
    is_initialized: "Py_IsInitialized" fn() -> c_int;
    save_thread: "PyEval_SaveThread" fn() -> *mut c_void;
    gil_ensure: "PyGILState_Ensure" fn() -> c_int;
    gil_release: "PyGILState_Release" fn(c_int);
    compile_string: "Py_CompileString" fn(*const c_char, *const c_char, c_int) -> Obj;
    exec_code_module: "PyImport_ExecCodeModule" fn(*const c_char, Obj) -> Obj;
    get_attr: "PyObject_GetAttrString" fn(Obj, *const c_char) -> Obj;
    call_object: "PyObject_CallObject" fn(Obj, Obj) -> Obj;
    tuple_new: "PyTuple_New" fn(isize) -> Obj;
    tuple_set: "PyTuple_SetItem" fn(Obj, isize, Obj) -> c_int;
    from_u64: "PyLong_FromUnsignedLongLong" fn(u64) -> Obj;
    from_bool: "PyBool_FromLong" fn(c_long) -> Obj;
    from_str: "PyUnicode_FromString" fn(*const c_char) -> Obj;
    as_utf8: "PyUnicode_AsUTF8AndSize" fn(Obj, *mut isize) -> *const c_char;
    dec_ref: "Py_DecRef" fn(Obj);
    err_occurred: "PyErr_Occurred" fn() -> Obj;
    err_fetch: "PyErr_Fetch" fn(*mut Obj, *mut Obj, *mut Obj);
    object_str: "PyObject_Str" fn(Obj) -> Obj;
}

/// An argument to a bridge function.
pub enum Arg<'a> {
    Str(&'a str),
    Int(u64),
    Bool(bool),
}

/// The interpreter, initialised, with the bridge module loaded. Every
/// call takes the GIL, so it may be used from any thread.
pub(super) struct Python {
    api: Api,
    bridge: Obj,
}

// SAFETY: the module pointer is only touched while holding the GIL.
unsafe impl Send for Python {}
unsafe impl Sync for Python {}

impl Python {
    /// Loads libpython at `lib`, initialises it with `home` as PYTHONHOME
    /// and executes the bridge's `source` as module `name`.
    pub(super) fn start(
        lib: &Path,
        home: &str,
        name: &str,
        source: &str,
    ) -> Result<Python, String> {
        let api = Api::open(lib)?;
        // SAFETY: the functions are libpython's; the GIL is taken after
        // initialisation and released at the end.
        unsafe {
            if (api.is_initialized)() == 0 {
                // The embedded interpreter finds its standard library from
                // PYTHONHOME, not from this executable's path, which is not
                // python's. This is the worker's own process, started for
                // the GPU work: nothing else here reads the variable.
                std::env::set_var("PYTHONHOME", home);
                // 0: Python installs no signal handlers; the worker keeps its own.
                (api.initialize_ex)(0);
                (api.save_thread)();
            }
            let gil = (api.gil_ensure)();
            let bridge = load_module(&api, name, source);
            (api.gil_release)(gil);
            Ok(Python {
                api,
                bridge: bridge?,
            })
        }
    }

    /// `bridge.function(*args)`, which returns a str.
    pub(super) fn call(&self, function: &str, args: &[Arg]) -> Result<String, String> {
        let name = CString::new(function).map_err(|e| e.to_string())?;
        let api = &self.api;
        // SAFETY: the GIL is held for every C-API call below; references
        // are released on every path (`tuple_set` steals its item's).
        unsafe {
            let gil = (api.gil_ensure)();
            let result = (|| {
                let func = (api.get_attr)(self.bridge, name.as_ptr());
                if func.is_null() {
                    return Err(error(api));
                }
                let tuple = (api.tuple_new)(args.len() as isize);
                for (i, a) in args.iter().enumerate() {
                    let item = match a {
                        Arg::Str(s) => {
                            let c = CString::new(*s).map_err(|e| e.to_string())?;
                            (api.from_str)(c.as_ptr())
                        }
                        Arg::Int(n) => (api.from_u64)(*n),
                        Arg::Bool(b) => (api.from_bool)(c_long::from(*b)),
                    };
                    (api.tuple_set)(tuple, i as isize, item);
                }
                let out = (api.call_object)(func, tuple);
                (api.dec_ref)(tuple);
                (api.dec_ref)(func);
                if out.is_null() {
                    return Err(error(api));
                }
                let text = text_of(api, out);
                (api.dec_ref)(out);
                text
            })();
            (api.gil_release)(gil);
            result
        }
    }
}

/// Compiles `source` as `name` and runs it as a module.
unsafe fn load_module(api: &Api, name: &str, source: &str) -> Result<Obj, String> {
    let c = |s: &str| CString::new(s).map_err(|e| e.to_string());
    let (cname, csource, cfile) = (c(name)?, c(source)?, c(&format!("<attnscope>/{name}.py"))?);
    // SAFETY: the caller holds the GIL.
    unsafe {
        let code = (api.compile_string)(csource.as_ptr(), cfile.as_ptr(), FILE_INPUT);
        if code.is_null() {
            return Err(error(api));
        }
        let module = (api.exec_code_module)(cname.as_ptr(), code);
        (api.dec_ref)(code);
        if module.is_null() {
            return Err(error(api));
        }
        Ok(module)
    }
}

/// A str object's text.
unsafe fn text_of(api: &Api, obj: Obj) -> Result<String, String> {
    let mut len = 0isize;
    // SAFETY: the caller holds the GIL; the buffer lives as long as `obj`.
    unsafe {
        let p = (api.as_utf8)(obj, &mut len);
        if p.is_null() {
            return Err(error(api));
        }
        let bytes = std::slice::from_raw_parts(p as *const u8, len.max(0) as usize);
        Ok(String::from_utf8_lossy(bytes).into_owned())
    }
}

/// The pending Python exception as one line (and cleared).
unsafe fn error(api: &Api) -> String {
    // SAFETY: the caller holds the GIL.
    unsafe {
        if (api.err_occurred)().is_null() {
            return "Python call failed without an exception".into();
        }
        let (mut t, mut v, mut tb) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        (api.err_fetch)(&mut t, &mut v, &mut tb);
        let of = |o: Obj| -> String {
            if o.is_null() {
                return String::new();
            }
            let s = (api.object_str)(o);
            if s.is_null() {
                return String::new();
            }
            let text = text_of(api, s).unwrap_or_default();
            (api.dec_ref)(s);
            text
        };
        let (ty, msg) = (of(t), of(v));
        for o in [t, v, tb].into_iter().filter(|o| !o.is_null()) {
            (api.dec_ref)(o);
        }
        let ty = ty.trim_start_matches("<class '").trim_end_matches("'>");
        format!("Python: {ty}: {msg}")
    }
}
