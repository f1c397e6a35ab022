"""The compile cache: where it really is (locations), pre-building it (warm), clearing it safely
(clear), and the manifest that records what was warmed for which environment (manifest).

Nothing here imports torch: compiling happens in the target interpreter, in subprocesses that
run ``worker/_warm_worker.py``.
"""
