"""The deep tier: run the real attention kernels in the target interpreter.

``check --deep`` (``deep.probe``) asks torch which SDPA backends it accepts and why it refuses
the others, compiles and runs flex_attention against a float64 reference, and looks at
flash-attn and xformers. ``flexdoctor bench`` (``bench``) times every attention path here.
Both run stdlib+torch scripts (``worker/_deep_probe.py``, ``worker/_bench_worker.py``) in the
target interpreter, time-boxed, so a crash, a hang or an OOM becomes a result naming its stage.
"""
