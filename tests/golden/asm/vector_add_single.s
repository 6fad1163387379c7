; Vector add z = x + y over 4 tiles of 16 KiB, ONE buffer per operand (single-buffered).
; Each tile: MTE2 loads x and y into UB, VECTOR adds, MTE3 stores z. Flags order the pipes:
;   mte2 -> v  (data loaded)      v -> mte3 (result ready)
;   v -> mte2  (x, y buffers free) mte3 -> v (z buffer free)
; With one buffer, the load of tile i+1 must wait until the add of tile i has read x and y.
.chip edu
.tensor x f16[32768] in
.tensor y f16[32768] in
.tensor z f16[32768] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[8192]
    mte2.copy   ub[0x4000], y[0x0000], f16[8192]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.add       ub[0x8000], ub[0x0000], ub[0x4000], f16[8192]
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x0000], ub[0x8000], f16[8192]
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x4000], f16[8192]
    mte2.copy   ub[0x4000], y[0x4000], f16[8192]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.add       ub[0x8000], ub[0x0000], ub[0x4000], f16[8192]
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x4000], ub[0x8000], f16[8192]
    set_flag    mte3 -> v, 0
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
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0xc000], f16[8192]
    mte2.copy   ub[0x4000], y[0xc000], f16[8192]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.add       ub[0x8000], ub[0x0000], ub[0x4000], f16[8192]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0xc000], ub[0x8000], f16[8192]
