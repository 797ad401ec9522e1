"""attnscope's side of a Python variant, run inside the GPU worker's process.

The Rust side (src/gpu/python/) loads libpython, executes this module from
its embedded source and only ever passes ints and strings in and gets
strings (JSON or one error line) back: all the Python logic lives here.

A variant `py:MODULE:FUNCTION` (or `py:/path/file.py:FUNCTION`, or
`py:NAME` for a bundled adapter in `attnscope_adapters`) is called as
`fn(q, k, v)` (plus `causal=True` on a causal shape) on torch tensors that
alias the engine's own buffers, under the engine's stream. docs/usage.md,
"Python variants", says why it is done this way.
"""

import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import sys

ADAPTERS = "attnscope_adapters"

# Prepared functions, by handle (an index the Rust side keeps).
_prepared = []


def _one_line(e):
    """An exception as one line: its type and message, and where in the
    user's code it was raised (the last frame outside this file)."""
    text = str(e).strip().splitlines()
    msg = f"{type(e).__name__}: {text[0] if text else ''}".rstrip(": ")
    tb = e.__traceback__
    where = None
    while tb is not None:
        f = tb.tb_frame.f_code.co_filename
        if not f.endswith("attnscope_bridge.py") and not f.startswith("<"):
            where = f"{f}:{tb.tb_lineno}"
        tb = tb.tb_next
    return f"{msg} (at {where})" if where else msg


def _answer(work):
    """Runs `work`, returning its JSON or {"error": one line}."""
    try:
        return json.dumps({"ok": work()})
    except BaseException as e:  # noqa: BLE001 - everything becomes one line
        return json.dumps({"error": _one_line(e)})


def setup(info_json):
    """The interpreter's own sys.path and sys.executable, as the subprocess
    reported them, so a virtual environment's packages import here too."""

    def work():
        info = json.loads(info_json)
        sys.path[:] = [p for p in info.get("path", []) if p] or sys.path
        if info.get("executable"):
            sys.executable = info["executable"]
        # An embedded interpreter may have no argv; some libraries read it.
        if not getattr(sys, "argv", None):
            sys.argv = [sys.executable]
        return sys.version.split()[0]

    return _answer(work)


_adapters_source = None


def set_adapters(source):
    """The bundled adapters' source, embedded in attnscope: imported from
    it (not from disk) when a `py:NAME` variant first needs it."""
    global _adapters_source
    _adapters_source = source
    return _answer(lambda: True)


def _adapters():
    if ADAPTERS not in sys.modules and _adapters_source is not None:
        spec = importlib.util.spec_from_loader(ADAPTERS, loader=None)
        module = importlib.util.module_from_spec(spec)
        module.__file__ = f"<attnscope>/{ADAPTERS}.py"
        sys.modules[ADAPTERS] = module
        try:
            exec(compile(_adapters_source, module.__file__, "exec"), module.__dict__)
        except BaseException:
            del sys.modules[ADAPTERS]
            raise
    return importlib.import_module(ADAPTERS)


def _import(module_name):
    if module_name == ADAPTERS:
        return _adapters()
    if module_name.endswith(".py") or "/" in module_name:
        path = os.path.abspath(module_name)
        if not os.path.isfile(path):
            raise FileNotFoundError(f"no file {path}")
        name = "attnscope_user_" + hashlib.sha256(path.encode()).hexdigest()[:12]
        if name in sys.modules:
            return sys.modules[name]
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        # Only once whole: another thread must not see it half run.
        return sys.modules.setdefault(name, module)
    return importlib.import_module(module_name)


def split_spec(spec):
    """`NAME` -> (adapters, NAME); `MODULE:FUNCTION` -> (MODULE, FUNCTION)."""
    module_name, sep, fn_name = spec.rpartition(":")
    if not sep:
        return ADAPTERS, spec
    return module_name, fn_name


def _takes_qkv(fn):
    """None when fn can be called as fn(q, k, v), else why not."""
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # a builtin or extension: trust it
    try:
        sig.bind(None, None, None)
    except TypeError as e:
        return f"it cannot be called as fn(q, k, v): signature {sig} ({e})"
    return None


def _takes_causal(fn):
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(
        p.name == "causal" or p.kind == inspect.Parameter.VAR_KEYWORD for p in params
    )


def _source_info(fn, module):
    path = getattr(module, "__file__", None) or ""
    try:
        text = inspect.getsource(fn)
    except (OSError, TypeError):
        text = None
    if text is None and path and os.path.isfile(path):
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    digest = hashlib.sha256((text or "").encode()).hexdigest() if text else ""
    return {"file": path, "source_hash": digest}


def resolve(spec, problem_json):
    """Imports the function and asks whether it runs the problem, without
    torch: {"handle", "file", "source_hash", "refused"} (refused: the reason
    it does not take this shape, or null)."""

    def work():
        module_name, fn_name = split_spec(spec)
        try:
            module = _import(module_name)
        except ModuleNotFoundError as e:
            if e.name == "torch":
                raise RuntimeError(_no_torch(e)) from None
            if e.name and module_name.startswith(e.name):
                raise RuntimeError(
                    f"no module '{module_name}' on {sys.executable}'s sys.path "
                    "(set PYTHONPATH, or give a file: py:/path/file.py:FUNCTION)"
                ) from None
            raise
        if not hasattr(module, fn_name):
            raise RuntimeError(f"module '{module_name}' has no function '{fn_name}'")
        fn = getattr(module, fn_name)
        if not callable(fn):
            raise RuntimeError(
                f"'{module_name}:{fn_name}' is a {type(fn).__name__}, not a function"
            )
        why = _takes_qkv(fn)
        if why:
            raise RuntimeError(f"'{module_name}:{fn_name}': {why}")
        problem = json.loads(problem_json)
        refused = None
        if problem.get("causal") and not _takes_causal(fn):
            refused = "it takes no causal parameter, and the shape is causal"
        supports = getattr(fn, "attnscope_supports", None)
        if refused is None and callable(supports):
            answer = supports(dict(problem))
            refused = None if answer is None else str(answer)
        _prepared.append(
            {"fn": fn, "problem": problem, "spec": spec, "bound": None, "tensors": None}
        )
        return {
            "handle": len(_prepared) - 1,
            "refused": refused,
            **_source_info(fn, module),
        }

    return _answer(work)


def _no_torch(e):
    return (
        f"torch is not importable by {sys.executable} ({e}): "
        "install torch there, or point ATTNSCOPE_PYTHON at a Python that has it"
    )


def versions():
    """python, torch, triton versions and whether torch sees CUDA."""

    def work():
        out = {"python": sys.version.split()[0]}
        try:
            import torch
        except ImportError as e:
            raise RuntimeError(_no_torch(e)) from None
        out["torch"] = torch.__version__
        try:
            import triton

            out["triton"] = triton.__version__
        except ImportError:
            out["triton"] = None
        return out

    return _answer(work)


class _Buffer:
    """One engine buffer as __cuda_array_interface__ (version 3) sees it: no
    stream, so torch adds no synchronisation; int16 so bf16 needs no typestr
    (the tensor is viewed as the dtype after)."""

    def __init__(self, ptr, shape):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": "<i2",
            "data": (ptr, False),
            "version": 3,
            "strides": None,
            "stream": None,
        }


def _bind(p, ptrs, device):
    import torch

    pr = p["problem"]
    dtype = {"fp16": torch.float16, "bf16": torch.bfloat16}[pr["dtype"]]
    qs = (pr["b"], pr["hq"], pr["sq"], pr["d"])
    ks = (pr["b"], pr["hkv"], pr["sk"], pr["d"])
    dev = torch.device("cuda", device)
    shapes = (qs, ks, ks, qs)
    p["tensors"] = [
        torch.as_tensor(_Buffer(ptr, s), device=dev).view(dtype)
        for ptr, s in zip(ptrs[:4], shapes)
    ]
    # cudarc's default stream is the legacy NULL stream, torch's default too.
    p["stream"] = (
        torch.cuda.ExternalStream(ptrs[4], device=dev)
        if ptrs[4]
        else torch.cuda.default_stream(dev)
    )
    p["kwargs"] = {"causal": True} if pr.get("causal") else {}
    p["bound"] = ptrs


def call(handle, q, k, v, o, stream, device, check):
    """One call of the function on the engine's buffers and stream. The
    result is dropped unless `check`, when it is copied into O. "" or the
    error as one line."""
    p = _prepared[handle]
    try:
        ptrs = (q, k, v, o, stream)
        if p["bound"] != ptrs:
            _bind(p, ptrs, device)
        import torch

        tq, tk, tv, to = p["tensors"]
        with torch.cuda.stream(p["stream"]):
            out = p["fn"](tq, tk, tv, **p["kwargs"])
            if check:
                if not isinstance(out, torch.Tensor):
                    raise TypeError(f"it returned a {type(out).__name__}, not a tensor")
                if tuple(out.shape) != tuple(to.shape) or out.dtype != to.dtype:
                    raise TypeError(
                        f"it returned {tuple(out.shape)} {out.dtype}; "
                        f"expected {tuple(to.shape)} {to.dtype} (o as [B, Hq, Sq, D])"
                    )
                to.copy_(out)
        return ""
    except BaseException as e:  # noqa: BLE001
        return f"{p['spec']}: {_one_line(e)}"
