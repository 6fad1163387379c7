; Two cores, one tensor: y = relu(2 * x) over 2 x 16 KiB, each core taking half of the rows.
; The cores share nothing but GM, whose bandwidth their DMA transfers share.
; Run with: dsasim run-asm examples/two_core_scale.s --cores 2
.chip edu
.tensor x f16[16,1024] in
.tensor y f16[16,1024] out
.core 0
    mte2.copy   ub[0x0000], x[0x0000], f16[8,1024]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.muls      ub[0x4000], ub[0x0000], 2.0, f16[8,1024]
    v.relu      ub[0x4000], ub[0x4000], f16[8,1024]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x0000], ub[0x4000], f16[8,1024]
.core 1
    mte2.copy   ub[0x0000], x[0x4000], f16[8,1024]
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 0
    v.muls      ub[0x4000], ub[0x0000], 2.0, f16[8,1024]
    v.relu      ub[0x4000], ub[0x4000], f16[8,1024]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   y[0x4000], ub[0x4000], f16[8,1024]
