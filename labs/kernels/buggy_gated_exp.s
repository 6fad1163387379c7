; A double-buffered gated exponential, z = exp(x · w), over 4 tiles of 4096 f16 — WITH A BUG.
;
; Two buffer sets in UB; tile i uses set b = i % 2 and event id b, so MTE2 loads tile i+1 while
; VECTOR works on tile i and MTE3 stores tile i-1:
;   set 0: x ub[0x0000]  w ub[0x2000]  z ub[0x4000]
;   set 1: x ub[0x6000]  w ub[0x8000]  z ub[0xa000]
; Flags:  mte2 -> v, b   x and w loaded      v -> mte2, b   x and w buffers free (MTE2 may reload them)
;         v -> mte3, b   z computed          mte3 -> v, b   z buffer free (stored)
;
; The symptom: it runs to the end with no error and no warning, yet part of z does not match numpy. Which
; two instructions are not ordered, and which flag should have ordered them? Ask the sanitizer in lab mode,
; which reports the race (its hazard, lines and cycles) but not the cure:
;   dsasim run-asm labs/kernels/buggy_gated_exp.s --sanitize --lab
.chip edu
.tensor x f16[16384] in
.tensor w f16[16384] in
.tensor z f16[16384] out
.core 0
    ; both buffer sets start free
    set_flag    v -> mte2, 0
    set_flag    v -> mte2, 1
    set_flag    mte3 -> v, 0
    set_flag    mte3 -> v, 1
    ; tile 0, buffer set 0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x0000], f16[4096]
    mte2.copy   ub[0x2000], w[0x0000], f16[4096]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.mul       ub[0x4000], ub[0x0000], ub[0x2000], f16[4096]
    set_flag    v -> mte2, 0
    v.exp       ub[0x4000], ub[0x4000], f16[4096]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x0000], ub[0x4000], f16[4096]
    set_flag    mte3 -> v, 0
    ; tile 1, buffer set 1
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0x6000], x[0x2000], f16[4096]
    mte2.copy   ub[0x8000], w[0x2000], f16[4096]
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    wait_flag   mte3 -> v, 1
    v.mul       ub[0xa000], ub[0x6000], ub[0x8000], f16[4096]
    set_flag    v -> mte2, 1
    v.exp       ub[0xa000], ub[0xa000], f16[4096]
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   z[0x2000], ub[0xa000], f16[4096]
    set_flag    mte3 -> v, 1
    ; tile 2, buffer set 0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x4000], f16[4096]
    set_flag    mte2 -> v, 0
    mte2.copy   ub[0x2000], w[0x4000], f16[4096]
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.mul       ub[0x4000], ub[0x0000], ub[0x2000], f16[4096]
    set_flag    v -> mte2, 0
    v.exp       ub[0x4000], ub[0x4000], f16[4096]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x4000], ub[0x4000], f16[4096]
    set_flag    mte3 -> v, 0
    ; tile 3, buffer set 1
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0x6000], x[0x6000], f16[4096]
    set_flag    mte2 -> v, 1
    mte2.copy   ub[0x8000], w[0x6000], f16[4096]
    wait_flag   mte2 -> v, 1
    wait_flag   mte3 -> v, 1
    v.mul       ub[0xa000], ub[0x6000], ub[0x8000], f16[4096]
    set_flag    v -> mte2, 1
    v.exp       ub[0xa000], ub[0xa000], f16[4096]
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   z[0x6000], ub[0xa000], f16[4096]
    set_flag    mte3 -> v, 1
    ; consume the last 'buffer free' flags so none is left set
    wait_flag   v -> mte2, 0
    wait_flag   v -> mte2, 1
    wait_flag   mte3 -> v, 0
    wait_flag   mte3 -> v, 1
