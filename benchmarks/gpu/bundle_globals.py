"""Every global a bundle's pickled artifacts name, counted (for the import screen's allow-list).

    python3 benchmarks/gpu/bundle_globals.py BUNDLE.zip [...]
"""
import collections
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from flexdoctor.cache import megacache  # noqa: E402

seen = collections.Counter()
for path in sys.argv[1:]:
    with zipfile.ZipFile(path) as zf:
        for name in zf.namelist():
            if not name.startswith("artifacts/"):
                continue
            _, artifacts = megacache.parse(zf.read(name))
            for a in artifacts:
                if a.type == "autotune":
                    continue
                for module, attr in megacache._globals(a.content):
                    seen[(a.type, module, attr, megacache._allowed(str(module), str(attr)))] += 1
for (typ, module, attr, ok), n in sorted(seen.items(), key=lambda kv: (kv[0][3], kv[0][1] or "", kv[0][2] or "")):
    print(f"{'ok ' if ok else 'NO '} {typ:13} {module}.{attr}  x{n}")
