"""Named matmul shapes (lecture §1–§6), in one place.  C[M, N] = A[M, K] · B[K, N]."""

from autotune.space import Config

SHAPES = {
    "square":           dict(M=4096, N=4096, K=4096),
    "prefill_qkv":      dict(M=512, N=12288, K=4096),   # 7B decoder, 512 tokens, hidden 4096
    "prefill_ffn_up":   dict(M=512, N=11008, K=4096),
    "prefill_ffn_down": dict(M=512, N=4096, K=11008),
    "decode":           dict(M=16, N=11008, K=4096),    # one decode step, batch 16 (FFN up)
    "wgrad":            dict(M=512, N=512, K=32768),    # dW = Xᵀ·dY, K = tokens
    "small":            dict(M=512, N=512, K=512),
    "lora_a":           dict(M=512, N=16, K=4096),      # rank-16 adapters
    "lora_b":           dict(M=512, N=4096, K=16),
}

# what each shape stands for and what makes it hard to tune, as the demo explains it
ROLES = {
    "square": "a large square GEMM: compute-bound, big tiles win",
    "prefill_qkv": "an LLM's Q/K/V projection over a 512-token prompt (7B model, hidden 4096)",
    "decode": "one decode step for 16 sequences: 16 rows, memory-bound, small BLOCK_M wins",
    "wgrad": "a weight gradient (dW = X^T dY, K = 32,768 tokens): too few output tiles to fill the "
             "GPU, so only split-K does well",
    "small": "a 512^3 GEMM: a few dozen tiles for 108 SMs, launch- and occupancy-bound",
    "prefill_ffn_up": "an LLM's FFN up-projection over a 512-token prompt",
    "prefill_ffn_down": "an LLM's FFN down-projection over a 512-token prompt (K = 11,008)",
    "lora_a": "a rank-16 LoRA down-projection: N = 16",
    "lora_b": "a rank-16 LoRA up-projection: K = 16",
}

# lecture §6's toy network: a 7B decoder's prefill (512 tokens) and decode step (batch 16), 32 layers,
# and rank-16 LoRA adapters on the four attention projections (q, k, v, o: 4096 -> 4096) at prefill.
# name -> (shape, runs per inference)
NETWORK = {
    "prefill_qkv":      (SHAPES["prefill_qkv"], 32),
    "prefill_o":        (dict(M=512, N=4096, K=4096), 32),
    "prefill_ffn_up":   (SHAPES["prefill_ffn_up"], 32),
    "prefill_ffn_down": (SHAPES["prefill_ffn_down"], 32),
    "decode_qkv":       (dict(M=16, N=12288, K=4096), 32),
    "decode_o":         (dict(M=16, N=4096, K=4096), 32),
    "decode_ffn_up":    (SHAPES["decode"], 32),
    "decode_ffn_down":  (dict(M=16, N=4096, K=11008), 32),
    "lora_a":           (SHAPES["lora_a"], 4 * 32),
    "lora_b":           (SHAPES["lora_b"], 4 * 32),
}

# the lecture's five shapes for the config-list experiments (§2.2, §2.3)
LECTURE_FIVE = ("square", "prefill_qkv", "decode", "wgrad", "small")


def triton_list():
    """The 24 configs of the lecture's Triton example: BLOCK_M 128, BLOCK_N 128/256, BLOCK_K 64/128,
    stages 2/3/4, warps 4/8, GROUP_M 8."""
    return [Config({"BLOCK_M": 128, "BLOCK_N": bn, "BLOCK_K": bk, "GROUP_M": 8, "SPLIT_K": 1},
                   num_warps=w, num_stages=s)
            for bn in (128, 256) for bk in (64, 128) for s in (2, 3, 4) for w in (4, 8)]
