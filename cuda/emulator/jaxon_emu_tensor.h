// The emulated GPU's tensor-core and asynchronous-copy instructions, behind
// the device functions of cuda/kernels/jaxon_mma.h (included by jaxon_emu.h).
// Each follows the PTX ISA's definition exactly where a kernel could tell the
// difference: the fragment layouts of mma.sync (m16n8k16 bf16/f16, m16n8k8
// tf32) and ldmatrix (x1/x2/x4, .trans), the row addresses ldmatrix takes
// from each lane, cp.async's commit groups and zero fill. Warp-collective
// instructions are two rendezvous of the warp's 32 lanes: at the first each
// lane publishes a pointer to its operands (and which instruction it is at,
// so lanes at different collectives fail the launch), then each lane reads
// the others' operands and computes its own part of the result, and no lane
// leaves before all have read (the second). A cp.async is performed only when
// its thread waits for its group (cp.async.wait_group / wait_all), so a kernel
// that reads a stage before waiting for it reads stale shared memory here, as
// it may on a GPU. Tensor-core sums: the products of bf16, f16 and tf32
// operands are exact in float, and are added to the accumulator one by one in
// k order with float rounding (the hardware adds a whole k-slice with its own
// internal rounding, so last bits may differ from a GPU's). Hopper's
// wgmma.mma_async reads its operands from shared memory through matrix
// descriptors (start address, leading and stride byte offsets, swizzle mode,
// as the PTX ISA encodes them) and is performed at the wgmma.wait_group that
// covers it, per thread, so a stage reused before the wait is caught;
// mbarriers keep their phase, pending arrivals and transaction count in their
// 8 bytes of shared memory, and a thread waiting on one yields to the others;
// a phase whose transactions exceed what expect_tx announced fails the launch
// (too few leave it waiting: the executor reports the livelock). MN-major
// operands (the wgmma transpose immediates) follow CuTe's canonical layouts.
// TMA (cp.async.bulk.tensor, tile mode) reads the tensor map the emulated
// cuTensorMapEncodeTiled wrote (tensor_map.cc), copies the box with zeros out
// of bounds, swizzles it by shared-memory address bits, and completes its
// bytes on the mbarrier at once.
#ifndef JAXON_EMU_TENSOR_H
#define JAXON_EMU_TENSOR_H

enum jx_emu_collective_kind { JX_EMU_MMA_BF16 = 1, JX_EMU_MMA_F16, JX_EMU_MMA_TF32, JX_EMU_LDMATRIX, JX_EMU_WGMMA };

static inline const char *jx_emu_collective_name(int kind) {
  switch (kind) {
    case JX_EMU_MMA_BF16: return "mma.sync.m16n8k16 (bf16)";
    case JX_EMU_MMA_F16: return "mma.sync.m16n8k16 (f16)";
    case JX_EMU_MMA_TF32: return "mma.sync.m16n8k8 (tf32)";
    case JX_EMU_LDMATRIX: return "ldmatrix";
    case JX_EMU_WGMMA: return "wgmma.mma_async";
    default: return "a warp collective";
  }
}

[[noreturn]] static inline void jx_emu_fail(const char *message) {
  jx_emu_api_table->trap(jx_emu_self(), message);
  __builtin_unreachable();
}

struct jx_emu_published {
  int kind, variant;
  const void *data;
};

/**
 * First rendezvous of a .sync.aligned warp collective: every lane of the warp publishes `mine` (its instruction and
 * a pointer to its operands); `all[l]` is lane l's operands. Traps when the warp is partial or its lanes are at
 * different instructions (or variants of one). `mine` is the caller's: the other lanes read it after this lane has
 * returned, so it must live until the second rendezvous (jx_emu_warp_release), as the operands do.
 */
static inline void jx_emu_warp_gather(const jx_emu_published &mine, const void **all) {
  jx_emu_thread *self = jx_emu_self();
  const int kind = mine.kind, variant = mine.variant;
  char message[200];
  if (__activemask() != 0xffffffffu) {
    snprintf(message, sizeof message, "%s needs all 32 lanes of a warp, and warp %u of this block has fewer", jx_emu_collective_name(kind), self->warp);
    jx_emu_fail(message);
  }
  unsigned long long values[32];
  jx_emu_exchange(0xffffffffu, (unsigned long long)(uintptr_t)&mine, values);
  for (unsigned l = 0; l < 32; l++) {
    const jx_emu_published *p = (const jx_emu_published *)(uintptr_t)values[l];
    if (p->kind != kind || p->variant != variant) {
      snprintf(message, sizeof message, "lanes of warp %u execute different warp collectives together: %s (variant %d) in lane %u, %s (variant %d) in lane %u",
               self->warp, jx_emu_collective_name(kind), variant, self->lane, jx_emu_collective_name(p->kind), p->variant, l);
      jx_emu_fail(message);
    }
    all[l] = p->data;
  }
}
/** Second rendezvous: every lane has read what the others published, so their operands may change again. */
static inline void jx_emu_warp_release() { __syncwarp(0xffffffffu); }

static inline float jx_emu_bf16_to_float(unsigned short h) { return __uint_as_float((unsigned)h << 16); }
/** The tf32 value an mma reads from a 32-bit register: the low 13 mantissa bits are ignored. */
static inline float jx_emu_tf32_operand(unsigned bits) { return __uint_as_float(bits & 0xffffe000u); }
/** cvt.rna.tf32.f32: 10 mantissa bits, to nearest with ties away from zero; NaN stays NaN, infinities stay. */
static inline float jx_emu_float_to_tf32(float x) {
  unsigned bits = __float_as_uint(x);
  if ((bits & 0x7f800000u) == 0x7f800000u) return __uint_as_float((bits & 0x7fffffffu) == 0x7f800000u ? bits : (bits | 0x400000u) & 0xffffe000u);
  return __uint_as_float((bits + 0x1000u) & 0xffffe000u);
}

// ---- mma.sync ----

struct jx_emu_mma_operands {
  unsigned a[4], b[2];
};

/** A 16-bit element of a register: the lower-indexed element sits in the low half. */
static inline unsigned short jx_emu_half_of(unsigned reg, int upper) { return (unsigned short)(upper ? reg >> 16 : reg & 0xffffu); }

/**
 * mma.sync.aligned.m16n8k16.row.col.f32.{bf16,f16}.{bf16,f16}.f32 d, a, b, c with d = c (accumulate in place).
 * PTX ISA fragments (groupID g = lane >> 2, threadID_in_group t = lane % 4): A (16 x 16, row) a0..a7 in 4 registers,
 * row g for a0, a1, a4, a5 and g + 8 otherwise, column 2t + (i & 1) for i < 4 and 2t + (i & 1) + 8 otherwise;
 * B (16 x 8, col) b0..b3 in 2 registers, row 2t + (i & 1) for i < 2 and 2t + (i & 1) + 8 otherwise, column g;
 * C and D (16 x 8) c0..c3, row g for c0, c1 and g + 8 otherwise, column 2t + (i & 1).
 */
static inline void jx_emu_mma_m16n8k16(int kind, float *d, const unsigned *a, const unsigned *b) {
  jx_emu_mma_operands mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
  const void *all[32];
  const jx_emu_published published = {kind, 0, &mine};
  jx_emu_warp_gather(published, all);
  const auto op = [&](unsigned l) { return (const jx_emu_mma_operands *)all[l]; };
  const auto value = [&](unsigned short h) { return kind == JX_EMU_MMA_BF16 ? jx_emu_bf16_to_float(h) : jx_emu_half_to_float(h); };
  // element A[r][k] lives in lane (r % 8) * 4 + (k % 8) / 2, register (r >= 8) + 2 (k >= 8), half k % 2
  const auto A = [&](int r, int k) { return value(jx_emu_half_of(op((r & 7) * 4 + ((k & 7) >> 1))->a[(r >= 8) + 2 * (k >= 8)], k & 1)); };
  // element B[k][n] lives in lane n * 4 + (k % 8) / 2, register (k >= 8), half k % 2
  const auto B = [&](int k, int n) { return value(jx_emu_half_of(op(n * 4 + ((k & 7) >> 1))->b[k >= 8], k & 1)); };
  const unsigned lane = jx_emu_self()->lane, g = lane >> 2, t = lane & 3;
  float out[4];
  for (int i = 0; i < 4; i++) {
    const int row = (int)g + 8 * (i >= 2), col = (int)(2 * t) + (i & 1);
    float acc = d[i];
    for (int k = 0; k < 16; k++) acc = fmaf(A(row, k), B(k, col), acc);
    out[i] = acc;
  }
  jx_emu_warp_release();
  for (int i = 0; i < 4; i++) d[i] = out[i];
}

/**
 * mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 d, a, b, c with d = c. PTX ISA fragments: A (16 x 8) a0..a3,
 * row g for a0, a2 and g + 8 for a1, a3, column t for a0, a1 and t + 4 for a2, a3; B (8 x 8) b0, b1, row t and
 * t + 4, column g; C and D as m16n8k16.
 */
static inline void jx_emu_mma_m16n8k8_tf32(float *d, const unsigned *a, const unsigned *b) {
  jx_emu_mma_operands mine = {{a[0], a[1], a[2], a[3]}, {b[0], b[1]}};
  const void *all[32];
  const jx_emu_published published = {JX_EMU_MMA_TF32, 0, &mine};
  jx_emu_warp_gather(published, all);
  const auto op = [&](unsigned l) { return (const jx_emu_mma_operands *)all[l]; };
  const auto A = [&](int r, int k) { return jx_emu_tf32_operand(op((r & 7) * 4 + (k & 3))->a[(r >= 8) + 2 * (k >= 4)]); };
  const auto B = [&](int k, int n) { return jx_emu_tf32_operand(op(n * 4 + (k & 3))->b[k >= 4]); };
  const unsigned lane = jx_emu_self()->lane, g = lane >> 2, t = lane & 3;
  float out[4];
  for (int i = 0; i < 4; i++) {
    const int row = (int)g + 8 * (i >= 2), col = (int)(2 * t) + (i & 1);
    float acc = d[i];
    for (int k = 0; k < 8; k++) acc = fmaf(A(row, k), B(k, col), acc);
    out[i] = acc;
  }
  jx_emu_warp_release();
  for (int i = 0; i < 4; i++) d[i] = out[i];
}

// ---- ldmatrix ----

/**
 * ldmatrix.sync.aligned.m8n8.x{count}[.trans].shared.b16: lanes 8i..8i+7 give the addresses of rows 0..7 of matrix i
 * (16 bytes each, 16-byte aligned); register i of lane l receives matrix i's row l / 4, columns 2 (l % 4) and
 * 2 (l % 4) + 1 (low half first), or with .trans its column l / 4, rows 2 (l % 4) and 2 (l % 4) + 1.
 */
static inline void jx_emu_ldmatrix(int count, bool trans, unsigned *r, const void *row) {
  const void *all[32];
  const jx_emu_published published = {JX_EMU_LDMATRIX, count * 2 + trans, row};
  jx_emu_warp_gather(published, all);
  const unsigned lane = jx_emu_self()->lane;
  for (int l = 0; l < 8 * count; l++) {
    if ((uintptr_t)all[l] % 16 != 0) {
      char message[160];
      snprintf(message, sizeof message, "ldmatrix: lane %d's row address %p is not 16-byte aligned", l, all[l]);
      jx_emu_fail(message);
    }
  }
  unsigned out[4];
  for (int i = 0; i < count; i++) {
    const unsigned short *rows[8];
    for (int j = 0; j < 8; j++) rows[j] = (const unsigned short *)all[8 * i + j];
    const unsigned g = lane >> 2, t = lane & 3;
    unsigned short lo, hi;
    if (trans) {
      lo = rows[2 * t][g];
      hi = rows[2 * t + 1][g];
    } else {
      lo = rows[g][2 * t];
      hi = rows[g][2 * t + 1];
    }
    out[i] = (unsigned)lo | ((unsigned)hi << 16);
  }
  jx_emu_warp_release();
  for (int i = 0; i < count; i++) r[i] = out[i];
}

// ---- cp.async ----

static inline void jx_emu_async_perform(const jx_emu_async_copy &c) {
  if (c.src_size) __builtin_memcpy(c.dst, c.src, c.src_size);
  if (c.src_size < c.size) __builtin_memset((char *)c.dst + c.src_size, 0, c.size - c.src_size);
}

/** Performs the thread's queued copies of commit groups before `group`, in issue order, and drops them. */
static inline void jx_emu_async_complete_before(jx_emu_thread *self, unsigned long long group) {
  unsigned kept = 0;
  for (unsigned i = 0; i < self->async_count; i++) {
    const jx_emu_async_copy &c = self->async_copies[i];
    if (c.group < group) jx_emu_async_perform(c);
    else self->async_copies[kept++] = c;
  }
  self->async_count = kept;
}

/** cp.async.{ca,cg}.shared.global [dst], [src], size, src_size: queued until its group is waited for. */
static inline void jx_emu_cp_async(void *dst, const void *src, unsigned size, unsigned src_size) {
  jx_emu_thread *self = jx_emu_self();
  if ((size != 4 && size != 8 && size != 16) || src_size > size || (uintptr_t)dst % size || (src_size && (uintptr_t)src % size)) {
    char message[200];
    snprintf(message, sizeof message, "cp.async of %u bytes (%u from the source) from %p to %p: the size must be 4, 8 or 16 and both addresses aligned to it",
             size, src_size, src, dst);
    jx_emu_fail(message);
  }
  if (self->async_count == JX_EMU_MAX_ASYNC_COPIES) {
    // the oldest copy completes early, which a GPU may also do
    jx_emu_async_perform(self->async_copies[0]);
    for (unsigned i = 1; i < self->async_count; i++) self->async_copies[i - 1] = self->async_copies[i];
    self->async_count--;
  }
  self->async_copies[self->async_count++] = {dst, src, size, src_size, self->async_groups};
}
static inline void jx_emu_cp_async_commit() { jx_emu_self()->async_groups++; }
/** cp.async.wait_group n: all but the n most recent commit groups are complete (copies not committed are not waited for). */
static inline void jx_emu_cp_async_wait(unsigned n) {
  jx_emu_thread *self = jx_emu_self();
  if (self->async_groups > n) jx_emu_async_complete_before(self, self->async_groups - n);
}
/** cp.async.wait_all: commit, then wait for every group. */
static inline void jx_emu_cp_async_wait_all() {
  jx_emu_cp_async_commit();
  jx_emu_cp_async_wait(0);
}


// ---- shared-memory addresses (as cvta.to.shared gives them: the dynamic shared memory starts at 0) ----

static inline unsigned jx_emu_smem_addr(const void *p) {
  jx_emu_thread *self = jx_emu_self();
  const unsigned char *base = (const unsigned char *)self->dynamic_shared, *q = (const unsigned char *)p;
  if (!base || q < base || q >= base + (1u << 18)) {
    char message[200];
    snprintf(message, sizeof message, "a shared-memory address for a descriptor or mbarrier (%p) is not in the block's dynamic shared memory (the emulation places only that in the shared window)", p);
    jx_emu_fail(message);
  }
  return (unsigned)(q - base);
}
static inline unsigned char *jx_emu_smem_ptr(unsigned addr) { return (unsigned char *)jx_emu_self()->dynamic_shared + addr; }

// ---- mbarrier: [0, 11) expected arrivals, [11, 22) pending arrivals, [22, 43) transaction bytes (signed), 63 phase ----

static inline void jx_emu_mbarrier_check(const void *bar) {
  if ((uintptr_t)bar % 8) jx_emu_fail("mbarrier: the object is not 8-byte aligned");
}
static inline unsigned long long jx_emu_mbar_pack(unsigned expected, unsigned pending, long long tx, unsigned phase) {
  return (unsigned long long)expected | ((unsigned long long)pending << 11) | (((unsigned long long)tx & 0x1fffffull) << 22) | ((unsigned long long)phase << 63);
}
static inline void jx_emu_mbarrier_init(unsigned long long *bar, unsigned count) {
  jx_emu_mbarrier_check(bar);
  if (count < 1 || count > 2047) jx_emu_fail("mbarrier.init: the emulation takes 1 to 2047 expected arrivals");
  *bar = jx_emu_mbar_pack(count, count, 0, 0);
}
/** `arrivals` arrive-on operations and `tx` more expected transaction bytes; the phase completes when both reach 0. */
static inline unsigned long long jx_emu_mbarrier_update(unsigned long long *bar, unsigned arrivals, long long tx) {
  jx_emu_mbarrier_check(bar);
  unsigned long long v = *bar;
  unsigned expected = v & 0x7ff, pending = (v >> 11) & 0x7ff, phase = (unsigned)(v >> 63);
  long long count = (long long)((v >> 22) & 0x1fffff);
  if (count & 0x100000) count -= 0x200000;
  if (expected == 0) jx_emu_fail("mbarrier: arrive on an object that mbarrier.init never set up");
  if (arrivals > pending) jx_emu_fail("mbarrier: more arrivals than the current phase expects");
  pending -= arrivals;
  count += tx;
  if (pending == 0 && count < 0) {
    // every arrival is in and more bytes completed than were expected: a wrong expect_tx count, which on a GPU
    // leaves the phase incomplete for ever (or completes it early with part of a tile missing)
    char message[200];
    snprintf(message, sizeof message, "mbarrier: transactions completed %lld bytes more than mbarrier.arrive.expect_tx announced for this phase", -count);
    jx_emu_fail(message);
  }
  jx_emu_api_table->progress(jx_emu_self());
  const unsigned long long state = (unsigned long long)phase;
  if (pending == 0 && count == 0) {
    pending = expected;
    phase ^= 1;
  }
  *bar = jx_emu_mbar_pack(expected, pending, count, phase);
  return state;
}
static inline bool jx_emu_mbarrier_try_wait_parity(unsigned long long *bar, unsigned parity) {
  jx_emu_mbarrier_check(bar);
  return (unsigned)(*bar >> 63) != (parity & 1);
}
/** Spins (yielding to the block's other threads) until the phase of this parity has completed. */
static inline void jx_emu_mbarrier_wait_parity(unsigned long long *bar, unsigned parity) {
  while (!jx_emu_mbarrier_try_wait_parity(bar, parity)) jx_emu_api_table->yield(jx_emu_self());
}
/** cp.async.mbarrier.arrive.noinc: the thread's copies so far complete, then they count as one arrival. */
static inline void jx_emu_cp_async_mbarrier_arrive(unsigned long long *bar) {
  jx_emu_thread *self = jx_emu_self();
  jx_emu_async_complete_before(self, ~0ull);
  jx_emu_mbarrier_update(bar, 1, 0);
}

/** mbarrier.arrive.expect_tx: `bytes` more transaction bytes expected this phase, then one arrival. */
static inline void jx_emu_mbarrier_arrive_expect_tx(unsigned long long *bar, unsigned bytes) {
  if (bytes >= (1u << 20)) jx_emu_fail("mbarrier.arrive.expect_tx: the transaction count must be below 2^20");
  jx_emu_mbarrier_update(bar, 1, (long long)bytes);
}

/** mbarrier.expect_tx: `bytes` more transaction bytes expected this phase, no arrival. */
static inline void jx_emu_mbarrier_expect_tx(unsigned long long *bar, unsigned bytes) {
  if (bytes >= (1u << 20)) jx_emu_fail("mbarrier.expect_tx: the transaction count must be below 2^20");
  jx_emu_mbarrier_update(bar, 0, (long long)bytes);
}

// ---- TMA: cp.async.bulk.tensor (tile mode) ----

/**
 * The shared-memory address a TMA copy with this swizzle mode (0 none, 1 32B, 2 64B, 3 128B) writes byte `offset`
 * of its box to, the box landing densely (row-major, dimension 0 innermost) at `dst`: address bits 4.. (the 16-byte
 * chunk) XOR address bits 7.. (the row of the swizzle pattern), 1, 2 or 3 bits of each, as CuTe's Swizzle<1,4,3>,
 * <2,4,3> and <3,4,3> and the PTX ISA's "Tensor Swizzling Modes": with 128B, the 16-byte chunk c of 128-byte row r
 * of each 1024-byte pattern lands at chunk c ^ (r % 8).
 */
static inline unsigned jx_emu_tma_swizzle(unsigned address, unsigned mode) {
  const unsigned bits = mode == 3 ? 7 : mode == 2 ? 3 : mode == 1 ? 1 : 0;
  return address ^ (((address >> 7) & bits) << 4);
}

/**
 * cp.async.bulk.tensor.{rank}d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [dst], [map, coords], [bar]:
 * the box at `coords` (elements, dimension 0 innermost, signed) of the tensor `map` describes, elements outside the
 * tensor read as zero (NaN with the NaN fill), written to shared memory swizzled, then the box's bytes (all of them,
 * the filled ones too) complete as transactions on `bar`. Performed at once: a GPU may also finish it before the
 * thread's next instruction, so a consumer that reads before waiting on `bar` is a race here as there.
 */
static inline void jx_emu_tma_load(void *dst, const void *tensor_map, unsigned long long *bar, int rank, const int *coords) {
  jx_emu_tensor_map m;
  __builtin_memcpy(&m, tensor_map, sizeof m);
  char message[240];
  if (m.magic != JX_EMU_TENSOR_MAP_MAGIC) jx_emu_fail("cp.async.bulk.tensor: the tensor map was not made by cuTensorMapEncodeTiled");
  if (m.rank != rank) {
    snprintf(message, sizeof message, "cp.async.bulk.tensor.%dd: the tensor map has rank %d", rank, (int)m.rank);
    jx_emu_fail(message);
  }
  const unsigned start = jx_emu_smem_addr(dst);
  if (start % 128) {
    snprintf(message, sizeof message, "cp.async.bulk.tensor: the shared-memory destination %u is not 128-byte aligned", start);
    jx_emu_fail(message);
  }
  if (m.swizzle == 3 && start % 1024) {
    snprintf(message, sizeof message, "cp.async.bulk.tensor: a 128B-swizzled box must start at a multiple of 1024 bytes (the swizzle atom), not %u", start);
    jx_emu_fail(message);
  }
  for (int d = 0; d < rank; d++)
    if (m.element_strides[d] != 1) jx_emu_fail("cp.async.bulk.tensor: element strides other than 1 are not emulated");
  unsigned long long count = 1;
  for (int d = 0; d < rank; d++) count *= m.box[d];
  const unsigned E = m.element_size;
  const unsigned total = (unsigned)(count * E);
  jx_emu_mbarrier_check(bar);
  unsigned char *window = jx_emu_smem_ptr(0);
  for (unsigned long long i = 0; i < count; i++) {
    unsigned long long rest = i, offset = 0;
    bool inside = true;
    for (int d = 0; d < rank; d++) {
      const long long c = (long long)coords[d] + (long long)(rest % m.box[d]);
      rest /= m.box[d];
      if (c < 0 || (unsigned long long)c >= m.dims[d]) inside = false;
      else offset += (unsigned long long)c * (d == 0 ? E : m.strides[d - 1]);
    }
    unsigned char *to = window + jx_emu_tma_swizzle(start + (unsigned)(i * E), m.swizzle);
    if (inside) __builtin_memcpy(to, (const unsigned char *)(uintptr_t)m.address + offset, E);
    else __builtin_memset(to, m.oob_nan ? 0xff : 0, E); // all ones: a NaN in every float type (a GPU's NaN bits may differ)
  }
  jx_emu_mbarrier_update(bar, 0, -(long long)total);
}

// ---- wgmma ----

/**
 * Byte address in shared memory of element (row, k) of a K-major operand (rows are M for A, N for B) that a wgmma
 * matrix descriptor describes: bits 0-13 start address >> 4, 16-29 leading byte offset >> 4, 32-45 stride byte offset
 * >> 4, 62-63 swizzle (0 none, 1 128B, 2 64B, 3 32B). Swizzled: rows of the swizzle width, 8-row groups SBO apart,
 * the 16-byte chunk XORed with the row within its group (address bits 4.. ^= bits 7..); without swizzle: 8x16-byte
 * core matrices, LBO apart along K and SBO apart along the rows.
 */
static inline unsigned jx_emu_wgmma_address(unsigned long long desc, int row, int kbyte) {
  const unsigned start = (unsigned)(desc & 0x3fff) << 4, lbo = (unsigned)((desc >> 16) & 0x3fff) << 4, sbo = (unsigned)((desc >> 32) & 0x3fff) << 4;
  const unsigned mode = (unsigned)(desc >> 62);
  if (mode == 0) return start + (unsigned)(row / 8) * sbo + (unsigned)(kbyte / 16) * lbo + (unsigned)(row % 8) * 16 + (unsigned)(kbyte % 16);
  const unsigned width = mode == 1 ? 128 : mode == 2 ? 64 : 32, bits = mode == 1 ? 7 : mode == 2 ? 3 : 1;
  const unsigned a = start + (unsigned)(row / 8) * sbo + (unsigned)(row % 8) * width + (unsigned)kbyte;
  return a ^ (((a >> 7) & bits) << 4);
}

/**
 * The same for an MN-major operand (imm-trans 1; 16-bit elements): element (mn, k) with `mnbyte` = 2 mn. Swizzled
 * (CuTe's canonical ((T,S/16,m),(8,k)) : ((1,T,LBO),(S/16 T,SBO)) for swizzle width S): atoms of 8 k-rows of S bytes
 * along M/N, the next atom along M/N LBO on, the next 8 k SBO on, then the swizzle of the address bits; without
 * swizzle: 8x8 core matrices of 16-byte rows along M/N (one k each), the next along M/N SBO on and along K LBO on.
 */
static inline unsigned jx_emu_wgmma_address_mn(unsigned long long desc, int mnbyte, int k) {
  const unsigned start = (unsigned)(desc & 0x3fff) << 4, lbo = (unsigned)((desc >> 16) & 0x3fff) << 4, sbo = (unsigned)((desc >> 32) & 0x3fff) << 4;
  const unsigned mode = (unsigned)(desc >> 62);
  if (mode == 0) return start + (unsigned)(mnbyte / 16) * sbo + (unsigned)(k / 8) * lbo + (unsigned)(k % 8) * 16 + (unsigned)(mnbyte % 16);
  const unsigned width = mode == 1 ? 128 : mode == 2 ? 64 : 32, bits = mode == 1 ? 7 : mode == 2 ? 3 : 1;
  const unsigned a = start + (unsigned)(mnbyte / (int)width) * lbo + (unsigned)(k / 8) * sbo + (unsigned)(k % 8) * width + (unsigned)(mnbyte % (int)width);
  return a ^ (((a >> 7) & bits) << 4);
}

static inline void jx_emu_wgmma_perform(const jx_emu_wgmma_op &op) {
  jx_emu_thread *self = jx_emu_self();
  const unsigned lane = self->lane, w = self->warp % 4, g = lane >> 2, t = lane & 3;
  const auto value = [&](unsigned long long desc, int row, int k, bool mn_major) {
    const unsigned char *p = jx_emu_smem_ptr(mn_major ? jx_emu_wgmma_address_mn(desc, row * 2, k) : jx_emu_wgmma_address(desc, row, k * 2));
    unsigned short h;
    __builtin_memcpy(&h, p, 2);
    return op.kind == JX_EMU_MMA_BF16 ? jx_emu_bf16_to_float(h) : jx_emu_half_to_float(h);
  };
  for (int i = 0; i < op.n / 2; i++) {
    const int row = (int)(16 * w + g + 8 * ((i & 3) >> 1)), col = 8 * (i / 4) + (int)(2 * t) + (i & 1);
    float acc = op.scale_d ? op.d[i] : 0.0f;
    for (int k = 0; k < 16; k++) acc = fmaf(value(op.desc_a, row, k, op.tnsp & 1), value(op.desc_b, col, k, op.tnsp & 2), acc);
    op.d[i] = acc;
  }
}

/**
 * wgmma.mma_async.sync.aligned.m64n{n}k16.f32.{bf16,f16} with imm-trans-a / imm-trans-b (tnsp bits 0 and 1):
 * queued with this thread's open commit group.
 */
static inline void jx_emu_wgmma(int kind, int n, float *d, unsigned long long desc_a, unsigned long long desc_b, int scale_d, int tnsp) {
  jx_emu_thread *self = jx_emu_self();
  struct { unsigned long long a, b; } mine = {desc_a, desc_b};
  const void *all[32];
  const jx_emu_published published = {JX_EMU_WGMMA, n * 4 + tnsp, &mine};
  jx_emu_warp_gather(published, all);
  for (int l = 0; l < 32; l++) {
    const auto *o = (const decltype(mine) *)all[l];
    if (o->a != desc_a || o->b != desc_b) {
      jx_emu_warp_release();
      jx_emu_fail("wgmma.mma_async: the lanes of a warp give different matrix descriptors");
    }
  }
  jx_emu_warp_release();
  if (self->wgmma_count == JX_EMU_MAX_WGMMA_OPS) {
    jx_emu_wgmma_perform(self->wgmma_ops[0]);
    for (unsigned i = 1; i < self->wgmma_count; i++) self->wgmma_ops[i - 1] = self->wgmma_ops[i];
    self->wgmma_count--;
  }
  self->wgmma_ops[self->wgmma_count++] = {d, desc_a, desc_b, self->wgmma_groups, kind, n, scale_d, tnsp};
}
static inline void jx_emu_wgmma_commit() { jx_emu_self()->wgmma_groups++; }
/** wgmma.wait_group n: every wgmma of all but the n most recent commit groups is done (performed here, in order). */
static inline void jx_emu_wgmma_wait(unsigned n) {
  jx_emu_thread *self = jx_emu_self();
  if (self->wgmma_groups <= n) return;
  const unsigned long long before = self->wgmma_groups - n;
  unsigned kept = 0;
  for (unsigned i = 0; i < self->wgmma_count; i++) {
    const jx_emu_wgmma_op op = self->wgmma_ops[i];
    if (op.group < before) jx_emu_wgmma_perform(op);
    else self->wgmma_ops[kept++] = op;
  }
  self->wgmma_count = kept;
}

#endif
