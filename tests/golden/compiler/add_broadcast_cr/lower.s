; add 40x300: z[r,c] = add(x[r,c], y[c])
; schedule: tile r=16,c=128 · order c,r · buffers 2 · prefetch 1 · 1 core
; compiled by dsasim for chip edu; GM traffic 48,600 B expected
.chip edu
.tensor x f16[40,300] in
.tensor y f16[300] in
.tensor z f16[40,300] out
.core 0
    mte2.copy   ub[0x2000], y[0x0000], f16[128]
    set_flag    mte2 -> v, 2
    mte2.copy   ub[0x2100], y[0x0100], f16[128]
    set_flag    mte2 -> v, 3
    mte2.copy   ub[0x0000], x[0x0000], f16[16,128], src_stride=300
    wait_flag   mte2 -> v, 2
    set_flag    mte2 -> v, 0
    mte2.copy   ub[0x1000], x[0x2580], f16[16,128], src_stride=300
    wait_flag   mte2 -> v, 0
    v.add       ub[0x2200], ub[0x0000], ub[0x2000], f16[16,128], src1_stride=0
    set_flag    mte2 -> v, 1
    set_flag    v -> mte2, 0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x4b00], f16[8,128], src_stride=300
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x0000], ub[0x2200], f16[16,128], dst_stride=300
    set_flag    mte2 -> v, 0
    wait_flag   mte2 -> v, 1
    v.add       ub[0x3200], ub[0x1000], ub[0x2000], f16[16,128], src1_stride=0
    set_flag    mte3 -> v, 0
    set_flag    v -> mte2, 1
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0x1000], x[0x0100], f16[16,128], src_stride=300
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   z[0x2580], ub[0x3200], f16[16,128], dst_stride=300
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.add       ub[0x2200], ub[0x0000], ub[0x2000], f16[8,128], src1_stride=0
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    set_flag    v -> mte2, 2
    wait_flag   mte2 -> v, 3
    set_flag    mte2 -> v, 1
    set_flag    mte3 -> v, 1
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x2680], f16[16,128], src_stride=300
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x4b00], ub[0x2200], f16[8,128], dst_stride=300
    set_flag    mte3 -> v, 0
    wait_flag   mte2 -> v, 1
    wait_flag   mte3 -> v, 1
    v.add       ub[0x3200], ub[0x1000], ub[0x2100], f16[16,128], src1_stride=0
    set_flag    mte2 -> v, 0
    wait_flag   v -> mte2, 2
    mte2.copy   ub[0x2000], y[0x0200], f16[44]
    set_flag    v -> mte2, 1
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   z[0x0100], ub[0x3200], f16[16,128], dst_stride=300
    set_flag    mte2 -> v, 2
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0x1000], x[0x4c00], f16[8,128], src_stride=300
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.add       ub[0x2200], ub[0x0000], ub[0x2100], f16[16,128], src1_stride=0
    set_flag    mte2 -> v, 1
    set_flag    mte3 -> v, 1
    set_flag    v -> mte2, 0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x0200], f16[16,44], src_stride=300
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x2680], ub[0x2200], f16[16,128], dst_stride=300
    wait_flag   mte2 -> v, 1
    wait_flag   mte3 -> v, 1
    v.add       ub[0x3200], ub[0x1000], ub[0x2100], f16[8,128], src1_stride=0
    set_flag    mte2 -> v, 0
    set_flag    v -> mte2, 1
    wait_flag   v -> mte2, 1
    mte2.copy   ub[0x1000], x[0x2780], f16[16,44], src_stride=300
    set_flag    v -> mte3, 1
    wait_flag   mte2 -> v, 2
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte3, 1
    mte3.copy   z[0x4c00], ub[0x3200], f16[8,128], dst_stride=300
    wait_flag   mte2 -> v, 0
    set_flag    mte3 -> v, 1
    set_flag    mte2 -> v, 1
    wait_flag   mte3 -> v, 0
    v.add       ub[0x2200], ub[0x0000], ub[0x2000], f16[16,44], src1_stride=0
    set_flag    v -> mte2, 0
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x[0x4d00], f16[8,44], src_stride=300
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x0200], ub[0x2200], f16[16,44], dst_stride=300
    wait_flag   mte2 -> v, 1
    wait_flag   mte3 -> v, 1
    v.add       ub[0x3200], ub[0x1000], ub[0x2000], f16[16,44], src1_stride=0
    set_flag    mte2 -> v, 0
    set_flag    v -> mte3, 1
    set_flag    mte3 -> v, 0
    wait_flag   v -> mte3, 1
    mte3.copy   z[0x2780], ub[0x3200], f16[16,44], dst_stride=300
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.add       ub[0x2200], ub[0x0000], ub[0x2000], f16[8,44], src1_stride=0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   z[0x4d00], ub[0x2200], f16[8,44], dst_stride=300
