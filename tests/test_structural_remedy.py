"""The remedy an error states in its own message (structural/remedy.py, issue 22): for an error no rule
knows, the unknown answer quotes the sentence of the root error's message that says what to do. Lines
are written for these tests in the shape the libraries print them (not copied from the corpus)."""

from __future__ import annotations

import pytest

from _explain_items import first, fix_text, healthy, scan

TB = ('Traceback (most recent call last):\n  File "/home/u/run.py", line 3, in <module>\n    main()\n'
      '  File "/home/u/.venv/lib/python3.11/site-packages/{pkg}/core.py", line 9, in main\n    raise X\n')


@pytest.mark.parametrize("text, want", [
    # a two-option message shaped like torch.load's (torch/serialization.py _get_wo_message): the hint is on a later
    # line (torch.load's own message is now read by tune-e4's e4-pickle shape, tests/test_structural_e4.py)
    (TB.format(pkg="torch") + "_pickle.UnpicklingError: Frob archive load failed. This file can still be loaded.\n"
     "\t(1) Re-running `frob.load` with `strict` set to `False` will likely succeed, but it can result in "
     "arbitrary code execution. Do it only if you trust the source.\n",
     "Re-running `frob.load` with `strict` set to `False` will likely succeed"),
    # a hint on the root error's own line
    (TB.format(pkg="engine") + "ValueError: The frobnicator cache is too small for 8192 tokens. Try increasing "
     "`frob_cache_gb` when initializing the engine.\n", "Try increasing `frob_cache_gb` when initializing the engine."),
    (TB.format(pkg="horovodx") + "ImportError: Extension horovodx.torch has not been built: /x/mpi_lib.so not found\n"
     "If this is not expected, reinstall horovodx with HOROVODX_WITH_PYTORCH=1 to debug the build error.\n",
     "reinstall horovodx with HOROVODX_WITH_PYTORCH=1"),
    ("RuntimeError: frobd failed to start\nHINT: run frobd --reset-state once, then start it again.\n",
     "HINT: run frobd --reset-state once"),
])
def test_the_errors_own_remedy_is_quoted_first(text, want):
    top = first(text)
    assert top is not None and top.kind == "unknown"
    assert want in fix_text(top)
    assert all(want not in c for c in top.fix.commands)  # log text is never a command


def test_a_remedy_on_the_wrapped_line_starts_at_its_sentence():
    """A message wrapped onto the next line: the quote starts at the remedy's sentence, not mid-way through
    the line's first words, and a sentence cut at the line's end is marked as cut."""
    text = (TB.format(pkg="frob") + "RuntimeError: frob pool exhausted (12.00 GiB total; 11.90 GiB in use;\n"
            "0 bytes free in pool frob0) If fragmentation is high try setting frob_pool_split\n")
    quote = fix_text(first(text))
    assert "If fragmentation is high try setting frob_pool_split…" in quote
    assert "bytes free" not in quote


def test_a_bare_exception_is_the_root_error():
    """raise Exception("...") prints a bare "Exception: ..." last line: it is the root error (its remedy quoted)."""
    text = TB.format(pkg="frob") + "Exception: frob could not open the model. Please reinstall frob with FROB_CUDA=1.\n"
    top = first(text)
    assert top.kind == "unknown" and top.subject == "Exception"
    assert "Please reinstall frob with FROB_CUDA=1." in fix_text(top)


@pytest.mark.parametrize("line", [
    "`RuntimeError: frob pool exhausted. Please set FROB_POOL_MB=4096.`",  # pasted in Markdown code
    "> RuntimeError: frob pool exhausted. Please set FROB_POOL_MB=4096.",  # quoted in an issue
    "**RuntimeError**: frob pool exhausted. Please set FROB_POOL_MB=4096.",
])
def test_an_error_line_pasted_in_markdown_is_the_root_error(line):
    top = first(TB.format(pkg="frob") + line + "\n")
    assert top.kind == "unknown" and top.subject == "RuntimeError" and "FROB_POOL_MB=4096" in fix_text(top)


def test_a_warning_next_to_the_error_is_not_its_remedy():
    text = (TB.format(pkg="frob") + "FutureWarning: `frob.old()` is deprecated. Please use `frob.new()` instead.\n"
            "RuntimeError: frob kernel 12 exploded\n")
    top = first(text)
    assert top is not None and top.kind == "unknown"
    assert "frob.new" not in fix_text(top) and "says what to do" not in fix_text(top)


def test_a_far_away_hint_is_not_the_errors():
    text = ("Please install frobtools for faster loading.\n" + "step ok\n" * 40 +
            TB.format(pkg="frob") + "RuntimeError: frob kernel 12 exploded\n")
    assert "frobtools" not in fix_text(first(text))


def test_a_known_error_keeps_its_own_fix():
    text = ("RuntimeError: CUDA error: an illegal memory access was encountered\n"
            "Please set CUDA_LAUNCH_BLOCKING=1 and try again.\n")
    top = first(text)
    assert top is not None and top.kind != "unknown"


@pytest.mark.parametrize("line", [
    "Please upgrade frob to enjoy the new features.\n",
    "HINT: you can pass --fast to speed this up\n",
    "Try setting OMP_NUM_THREADS for better performance.\n",
])
def test_hints_without_an_error_raise_nothing(line):
    healthy(line * 3)


def test_a_hostile_hint_stays_data_in_text_and_json():
    """The quoted sentence is log text: shown, never interpreted (rich markup, a bidi override), and
    never a command, in every format explain writes."""
    import json

    from flexdoctor.render.explain_view import render

    text = "RuntimeError: frob exploded\nHINT: [bold red]LOUD[/] \u202eevil ::error::x, try again.\n"
    result = scan(text)
    shown = render(result, "log.txt", fmt="text")
    assert "[bold red]LOUD[/]" in shown and "\u202e" not in shown and "\\u202e" in shown
    raw = render(result, "log.txt", fmt="json")
    assert "\u202e" not in raw  # escaped in the JSON text, the value itself kept as data
    assert "[bold red]LOUD[/] \u202eevil" in json.dumps(json.loads(raw), ensure_ascii=False)
    (item,) = [a for a in result.answers if a.kind == "unknown"]
    assert all("LOUD" not in c for c in item.fix.commands)


def test_a_generic_reading_also_quotes_the_errors_own_remedy():
    """A reading that knows the class but not the instance (medium confidence: the out-of-memory shape,
    here HIP's) keeps its fix and quotes what the message adds (the HIP knob, not the CUDA one)."""
    text = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "23.98 GiB of which 1.02 GiB is free. Of the allocated memory 20.1 GiB is allocated by PyTorch, and "
            "1.9 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
    top = first(text)
    assert top is not None and top.kind == "out-of-memory" and top.confidence != "high"
    assert "own message adds" in top.fix.summary and "PYTORCH_HIP_ALLOC_CONF" in top.fix.summary
    assert all("HIP_ALLOC" not in c for c in top.fix.commands)  # quoted, never a command


def test_a_remedy_the_fix_already_gives_is_not_quoted_again():
    text = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
            "23.65 GiB of which 1.2 GiB is free. Of the allocated memory 20.1 GiB is allocated by PyTorch, and 1.9 GiB "
            "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")
    top = first(text)
    assert "PYTORCH_CUDA_ALLOC_CONF" in top.fix.summary and "own message adds" not in top.fix.summary


def test_a_table_reading_is_not_padded_with_the_message():
    """A high-confidence reading (a table named the thing) is the instance's fix: no quote is added."""
    text = ("RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. "
            "This error indicates that your module has parameters that were not used in producing loss. You can "
            "enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
            "`torch.nn.parallel.DistributedDataParallel`.\n")
    top = first(text)
    assert top is not None and top.confidence == "high" and "own message adds" not in top.fix.summary
