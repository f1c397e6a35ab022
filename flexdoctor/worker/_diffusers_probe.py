# Run BY THE TARGET INTERPRETER in a subprocess with a timeout, stdlib only, Python 3.8+.
# Imports diffusers' attention dispatcher and reads what it supports. Never enables a backend,
# never loads a model and never touches a *_hub backend (those download kernels).
# Usage: _diffusers_probe.py [BACKEND]   BACKEND: an AttentionBackendName value to check.
# Protocol (stdout): the stage and result lines of _wire.py.
import importlib.util
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _wire, even under -P / PYTHONSAFEPATH
import _wire  # noqa: E402  (drops this folder from sys.path again: `import diffusers` finds the real one)
from _wire import stage  # noqa: E402


def short_error(exc):
    return _wire.short_error(exc, 2000)


def drop_modules():
    for name in [m for m in sys.modules if m == "diffusers" or m.startswith("diffusers.")]:
        del sys.modules[name]


def import_dispatch(out):
    """Import as the training job would; returns the attention_dispatch module or None."""
    stage("import diffusers")
    try:
        import diffusers
    except BaseException as exc:
        out["import_error"], out["import_stage"] = short_error(exc), "import diffusers"
        return None
    out["version"] = str(getattr(diffusers, "__version__", "") or "") or out.get("version")
    if importlib.util.find_spec("diffusers.models.attention_dispatch") is None:
        out["has_dispatcher"] = False
        return None
    out["has_dispatcher"] = True
    stage("import attention_dispatch")
    try:
        import diffusers.models.attention_dispatch as ad
    except BaseException as exc:
        out["import_error"], out["import_stage"] = short_error(exc), "import attention_dispatch"
        return None
    return ad


def main():
    backend = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None
    out = {"env": {k: os.environ[k] for k in ("DIFFUSERS_ATTN_BACKEND", "DIFFUSERS_ATTN_CHECKS") if k in os.environ}}
    spec = importlib.util.find_spec("diffusers")
    if spec is None:
        out["version"] = None
        _wire.emit(out)
        return
    out["location"] = os.path.dirname(spec.origin or "") or None
    try:
        from importlib import metadata

        out["version"] = metadata.version("diffusers")
    except Exception:
        out["version"] = None
    ad = import_dispatch(out)
    out["imported"] = ad is not None
    if ad is None and out.get("import_error") and "DIFFUSERS_ATTN_BACKEND" in os.environ:
        # An invalid DIFFUSERS_ATTN_BACKEND breaks the import (recorded above); read the enum
        # without it so the report can still list the valid names.
        stage("retry without DIFFUSERS_ATTN_BACKEND")
        drop_modules()
        del os.environ["DIFFUSERS_ATTN_BACKEND"]
        ad = import_dispatch({})
    if ad is not None:
        try:
            out["backends"] = [str(b.value) for b in ad.AttentionBackendName]
        except Exception as exc:
            out["backends_error"] = short_error(exc)
        registry = getattr(ad, "_AttentionBackendRegistry", None)
        if registry is not None:
            out["checks_enabled"] = bool(getattr(registry, "_checks_enabled", False))
            active = getattr(registry, "_active_backend", None)
            out["default_backend"] = str(getattr(active, "value", active)) if active is not None else None
        if backend and not backend.endswith("_hub"):
            out["requirement_backend"] = backend
            check = getattr(ad, "_check_attention_backend_requirements", None)
            if check is not None and backend in (out.get("backends") or []):
                stage("requirement check " + backend)
                out["requirement_checked"] = True
                try:
                    check(ad.AttentionBackendName(backend))
                except BaseException as exc:
                    out["requirement_error"] = str(exc).strip()[-2000:] or type(exc).__name__
    _wire.emit(out)


if __name__ == "__main__":
    main()
