"""flexdoctor: a doctor and CI preflight for GPU attention kernels (FlexAttention, FlashAttention, SDPA)."""

__version__ = "0.1.0"
