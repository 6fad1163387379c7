; add_kernel: tile-language kernel, grid 3x1x1, 3 programs on 1 core
.chip edu
.tensor x_ptr f32[2500] in
.tensor y_ptr f32[2500] in
.tensor out_ptr f32[2500] inout
.core 0
    mte2.copy   ub[0x0000], x_ptr[0x0000], f32[1024]
    mte2.copy   ub[0x2000], y_ptr[0x0000], f32[1024]
    set_flag    mte2 -> v, 0
    mte2.copy   ub[0x1000], x_ptr[0x1000], f32[1024]
    wait_flag   mte2 -> v, 0
    v.add       ub[0x4000], ub[0x0000], ub[0x2000], f32[1024]
    mte2.copy   ub[0x3000], y_ptr[0x1000], f32[1024]
    set_flag    v -> mte2, 0
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   out_ptr[0x0000], ub[0x4000], f32[1024]
    set_flag    mte2 -> v, 1
    wait_flag   v -> mte2, 0
    mte2.copy   ub[0x0000], x_ptr[0x2000], f32[452]
    set_flag    mte3 -> v, 0
    mte2.copy   ub[0x2000], y_ptr[0x2000], f32[452]
    wait_flag   mte2 -> v, 1
    v.add       ub[0x5000], ub[0x1000], ub[0x3000], f32[1024]
    set_flag    mte2 -> v, 0
    set_flag    v -> mte3, 1
    wait_flag   v -> mte3, 1
    mte3.copy   out_ptr[0x1000], ub[0x5000], f32[1024]
    wait_flag   mte2 -> v, 0
    wait_flag   mte3 -> v, 0
    v.copy      ub[0x6000], ub[0x0700], f32[4]
    v.dup       ub[0x0700], 0.0, f32[576]
    v.copy      ub[0x0700], ub[0x6000], f32[4]
    v.copy      ub[0x6020], ub[0x2700], f32[4]
    v.dup       ub[0x2700], 0.0, f32[576]
    v.copy      ub[0x2700], ub[0x6020], f32[4]
    v.add       ub[0x4000], ub[0x0000], ub[0x2000], f32[1024]
    set_flag    v -> mte3, 0
    wait_flag   v -> mte3, 0
    mte3.copy   out_ptr[0x2000], ub[0x4000], f32[452]
