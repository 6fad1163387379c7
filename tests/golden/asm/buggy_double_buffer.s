; A double-buffered SiLU, y = x * sigmoid(x), over 4 tiles of 4096 f16 — WITH A BUG.
; The sigmoid is computed in f32 for accuracy, then multiplied by x in f16.
;
; Two buffer sets in UB; tile i uses set b = i % 2 and event id b, so MTE2 loads tile i+1 while
; VECTOR works on tile i and MTE3 stores tile i-1:
;   set 0: x ub[0x0000]  t (f32) ub[0x2000]  s ub[0x6000]  y ub[0x8000]
;   set 1: x ub[0xa000]  t (f32) ub[0xc000]  s ub[0x10000] y ub[0x12000]
; Flags:  mte2 -> v, b   x loaded            v -> mte2, b   x buffer free (MTE2 may reload it)
;         v -> mte3, b   y computed          mte3 -> v, b   y buffer free (stored)
;
; The symptom: it runs to the end with no error and no warning, yet on the edu chip part of y is
; wrong, while on the ascend910b-like preset every output happens to come out right. Which two
; instructions are not ordered, and which flag should have ordered them? Ask the sanitizer; in lab
; mode it reports the race (its hazard, lines and cycles) but not the cure:
;   dsasim run-asm examples/buggy_double_buffer.s --sanitize --lab
;
.chip edu
.tensor x f16[16384] in
.tensor y f16[16384] out
.core 0
    set_flag    v -> mte2, 0
    set_flag    v -> mte2, 1
    set_flag    mte3 -> v, 0
    set_flag    mte3 -> v, 1
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x0000], f16[4096]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.cast      ub[0x2000], ub[0x0000], f16[4096], to=f32
    set_flag    v -> mte2, 0
    v.muls      ub[0x2000], ub[0x2000], -1.0, f32[4096]
    v.exp       ub[0x2000], ub[0x2000], f32[4096]
    v.adds      ub[0x2000], ub[0x2000], 1.0, f32[4096]
    v.recip     ub[0x2000], ub[0x2000], f32[4096]
    v.cast      ub[0x6000], ub[0x2000], f32[4096], to=f16
    wait_flag   mte3 -> v, 0
    v.mul       ub[0x8000], ub[0x0000], ub[0x6000], f16[4096]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x8000], f16[4096]
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0xa000], x[0x2000], f16[4096]
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    v.cast      ub[0xc000], ub[0xa000], f16[4096], to=f32
    set_flag    v -> mte2, 1
    v.muls      ub[0xc000], ub[0xc000], -1.0, f32[4096]
    v.exp       ub[0xc000], ub[0xc000], f32[4096]
    v.adds      ub[0xc000], ub[0xc000], 1.0, f32[4096]
    v.recip     ub[0xc000], ub[0xc000], f32[4096]
    v.cast      ub[0x10000], ub[0xc000], f32[4096], to=f16
    wait_flag   mte3 -> v, 1
    v.mul       ub[0x12000], ub[0xa000], ub[0x10000], f16[4096]
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   y[0x2000], ub[0x12000], f16[4096]
    set_flag    mte3 -> v, 1
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x4000], f16[4096]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.cast      ub[0x2000], ub[0x0000], f16[4096], to=f32
    set_flag    v -> mte2, 0
    v.muls      ub[0x2000], ub[0x2000], -1.0, f32[4096]
    v.exp       ub[0x2000], ub[0x2000], f32[4096]
    v.adds      ub[0x2000], ub[0x2000], 1.0, f32[4096]
    v.recip     ub[0x2000], ub[0x2000], f32[4096]
    v.cast      ub[0x6000], ub[0x2000], f32[4096], to=f16
    wait_flag   mte3 -> v, 0
    v.mul       ub[0x8000], ub[0x0000], ub[0x6000], f16[4096]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x4000], ub[0x8000], f16[4096]
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0xa000], x[0x6000], f16[4096]
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    v.cast      ub[0xc000], ub[0xa000], f16[4096], to=f32
    set_flag    v -> mte2, 1
    v.muls      ub[0xc000], ub[0xc000], -1.0, f32[4096]
    v.exp       ub[0xc000], ub[0xc000], f32[4096]
    v.adds      ub[0xc000], ub[0xc000], 1.0, f32[4096]
    v.recip     ub[0xc000], ub[0xc000], f32[4096]
    v.cast      ub[0x10000], ub[0xc000], f32[4096], to=f16
    wait_flag   mte3 -> v, 1
    v.mul       ub[0x12000], ub[0xa000], ub[0x10000], f16[4096]
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   y[0x6000], ub[0x12000], f16[4096]
    set_flag    mte3 -> v, 1
    wait_flag   v -> mte2, 0
    wait_flag   v -> mte2, 1
    wait_flag   mte3 -> v, 0
    wait_flag   mte3 -> v, 1
