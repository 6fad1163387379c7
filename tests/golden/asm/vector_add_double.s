; Vector add z = x + y over 4 tiles of 16 KiB, TWO buffers per operand (double-buffered).
; Tile i uses buffer set b = i % 2 and event id b, so MTE2 loads tile i+1 while VECTOR adds
; tile i and MTE3 stores tile i-1. Compare its cycles with vector_add_single.s.
;   set b=0: x ub[0x0000] y ub[0x4000] z ub[0x8000]   set b=1: x ub[0xc000] y ub[0x10000] z ub[0x14000]
.chip edu
.tensor x f16[32768] in
.tensor y f16[32768] in
.tensor z f16[32768] out
.core 0
    set_flag    v -> mte2, 0
    set_flag    v -> mte2, 1
    set_flag    mte3 -> v, 0
    set_flag    mte3 -> v, 1
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x0000], f16[8192]
    mte2.copy   ub[0x4000], y[0x0000], f16[8192]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.add       ub[0x8000], ub[0x0000], ub[0x4000], f16[8192]
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x0000], ub[0x8000], f16[8192]
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0xc000], x[0x4000], f16[8192]
    mte2.copy   ub[0x10000], y[0x4000], f16[8192]
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    wait_flag   mte3 -> v, 1
    v.add       ub[0x14000], ub[0xc000], ub[0x10000], f16[8192]
    set_flag    v -> mte2, 1
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   z[0x4000], ub[0x14000], f16[8192]
    set_flag    mte3 -> v, 1
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x8000], f16[8192]
    mte2.copy   ub[0x4000], y[0x8000], f16[8192]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.add       ub[0x8000], ub[0x0000], ub[0x4000], f16[8192]
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x8000], ub[0x8000], f16[8192]
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0xc000], x[0xc000], f16[8192]
    mte2.copy   ub[0x10000], y[0xc000], f16[8192]
    set_flag    mte2 -> v, 1
    wait_flag   mte2 -> v, 1
    wait_flag   mte3 -> v, 1
    v.add       ub[0x14000], ub[0xc000], ub[0x10000], f16[8192]
    set_flag    v -> mte2, 1
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   z[0xc000], ub[0x14000], f16[8192]
    set_flag    mte3 -> v, 1
    wait_flag   v -> mte2, 0
    wait_flag   v -> mte2, 1
    wait_flag   mte3 -> v, 0
    wait_flag   mte3 -> v, 1
