// Byte encoding of executables: little-endian fixed-width integers and
// length-prefixed strings, written by a Writer and read back by a Reader
// that checks every length against the bytes left, so a damaged blob fails
// with a message instead of reading past its end. The zlib crc32 over the
// payload catches bit flips before any field is trusted.
#include "runtime/Executable.h"

#include "support/Collectives.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include <zlib.h>

#include <cmath>
#include <cstring>

namespace kiln::runtime {

std::string_view deviceName(Device device) {
  return device == Device::cuda ? "cuda" : "cpu";
}

std::string_view gemmTypeName(GemmType type) {
  switch (type) {
  case GemmType::bf16:
    return "bf16";
  case GemmType::f16:
    return "f16";
  case GemmType::f32:
    break;
  }
  return "f32";
}

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'E', 'X', 'E', '\0'};
constexpr size_t kHeaderBytes = 8 + 4 + 8 + 4;

class Writer {
public:
  void u8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void u32(uint32_t v) { raw(&v, 4); }
  void u64(uint64_t v) { raw(&v, 8); }
  void i64(int64_t v) { raw(&v, 8); }
  void str(std::string_view s) {
    u64(s.size());
    out_.append(s.data(), s.size());
  }
  std::string take() { return std::move(out_); }

private:
  // Host order: kiln targets little-endian x86-64 and AArch64 only.
  void raw(const void *p, size_t n) {
    out_.append(static_cast<const char *>(p), n);
  }
  std::string out_;
};

class Reader {
public:
  explicit Reader(std::string_view in) : in_(in) {}
  bool u8(uint8_t &v) { return raw(&v, 1); }
  bool u32(uint32_t &v) { return raw(&v, 4); }
  bool u64(uint64_t &v) { return raw(&v, 8); }
  bool i64(int64_t &v) { return raw(&v, 8); }
  bool boolean(bool &v) {
    uint8_t b;
    if (!u8(b) || b > 1)
      return false;
    v = b != 0;
    return true;
  }
  bool str(std::string &s) {
    uint64_t n;
    if (!u64(n) || n > in_.size() - pos_)
      return false;
    s.assign(in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  /// A count of items each at least `minBytes` long, checked against the rest.
  bool count(uint64_t &n, size_t minBytes) {
    return u64(n) && n <= (in_.size() - pos_) / minBytes;
  }
  bool atEnd() const { return pos_ == in_.size(); }

private:
  bool raw(void *p, size_t n) {
    if (n > in_.size() - pos_)
      return false;
    std::memcpy(p, in_.data() + pos_, n);
    pos_ += n;
    return true;
  }
  std::string_view in_;
  size_t pos_ = 0;
};

void writeValues(Writer &w, const std::vector<ProgramValue> &values) {
  w.u64(values.size());
  for (const ProgramValue &v : values) {
    w.u8(static_cast<uint8_t>(v.dtype));
    w.u8(v.donated);
    w.u64(v.shape.size());
    for (int64_t d : v.shape)
      w.i64(d);
  }
}

bool readValues(Reader &r, std::vector<ProgramValue> &values) {
  uint64_t n;
  if (!r.count(n, 10))
    return false;
  values.resize(n);
  for (ProgramValue &v : values) {
    uint8_t dtype;
    uint64_t rank;
    if (!r.u8(dtype) || dtype > static_cast<uint8_t>(DType::i64) ||
        !r.boolean(v.donated) || !r.count(rank, 8))
      return false;
    v.dtype = static_cast<DType>(dtype);
    v.shape.resize(rank);
    for (int64_t &d : v.shape)
      if (!r.i64(d) || d < 0)
        return false;
  }
  return true;
}

void writeThunk(Writer &w, const Thunk &t) {
  w.u8(static_cast<uint8_t>(t.kind));
  switch (t.kind) {
  case Thunk::Kind::kernel:
    w.str(t.kernel.symbol);
    w.str(t.kernel.label);
    w.u64(t.kernel.slots.size());
    for (uint32_t s : t.kernel.slots)
      w.u32(s);
    w.u32(t.kernel.numResults);
    w.u64(t.kernel.inPlaceOperands.size());
    for (uint32_t s : t.kernel.inPlaceOperands)
      w.u32(s);
    w.i64(t.kernel.rangeSize);
    w.u8(t.kernel.splittable);
    w.i64(t.kernel.workPerIndex);
    break;
  case Thunk::Kind::gemm:
    for (uint32_t s : {t.gemm.a, t.gemm.b, t.gemm.c})
      w.u32(s);
    for (int64_t v : {t.gemm.batch, t.gemm.m, t.gemm.n, t.gemm.k})
      w.i64(v);
    w.u8(t.gemm.transA);
    w.u8(t.gemm.transB);
    w.u8(static_cast<uint8_t>(t.gemm.input));
    w.u8(static_cast<uint8_t>(t.gemm.output));
    w.u32(t.gemm.accumulator);
    for (int64_t v : {t.gemm.aView.offset, t.gemm.aView.batchStride,
                      t.gemm.bView.offset, t.gemm.bView.batchStride,
                      t.gemm.cView.offset, t.gemm.cView.batchStride})
      w.i64(v);
    break;
  case Thunk::Kind::copy:
    w.u32(t.copy.src);
    w.u32(t.copy.dst);
    w.u64(t.copy.bytes);
    break;
  case Thunk::Kind::allReduce:
    w.u32(t.allReduce.src);
    w.u32(t.allReduce.dst);
    w.u8(static_cast<uint8_t>(t.allReduce.element));
    w.i64(t.allReduce.count);
    break;
  case Thunk::Kind::attention: {
    const AttentionThunk &a = t.attention;
    w.u8(a.gradient);
    for (uint32_t s : {a.query, a.key, a.value, a.resultGrad, a.rngState,
                       a.result, a.rowStats, a.queryGrad, a.keyGrad,
                       a.valueGrad})
      w.u32(s);
    w.u8(static_cast<uint8_t>(a.element));
    for (int64_t v :
         {a.batch, a.heads, a.kvHeads, a.queries, a.keys, a.headDim})
      w.i64(v);
    for (double v : {a.scale, a.dropout}) {
      int64_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      w.i64(bits);
    }
    w.u8(a.causal);
    w.i64(a.window);
    break;
  }
  }
}

bool readThunk(Reader &r, Thunk &t) {
  uint8_t kind;
  if (!r.u8(kind) || kind > static_cast<uint8_t>(Thunk::Kind::allReduce))
    return false;
  t.kind = static_cast<Thunk::Kind>(kind);
  switch (t.kind) {
  case Thunk::Kind::kernel: {
    uint64_t n;
    if (!r.str(t.kernel.symbol) || !r.str(t.kernel.label) || !r.count(n, 4))
      return false;
    t.kernel.slots.resize(n);
    for (uint32_t &s : t.kernel.slots)
      if (!r.u32(s))
        return false;
    if (!r.u32(t.kernel.numResults) || !r.count(n, 4))
      return false;
    t.kernel.inPlaceOperands.resize(n);
    for (uint32_t &s : t.kernel.inPlaceOperands)
      if (!r.u32(s))
        return false;
    return r.i64(t.kernel.rangeSize) && t.kernel.rangeSize >= 0 &&
           r.boolean(t.kernel.splittable) && r.i64(t.kernel.workPerIndex) &&
           t.kernel.workPerIndex >= 0;
  }
  case Thunk::Kind::gemm: {
    uint8_t input, output;
    if (!r.u32(t.gemm.a) || !r.u32(t.gemm.b) || !r.u32(t.gemm.c) ||
        !r.i64(t.gemm.batch) || !r.i64(t.gemm.m) || !r.i64(t.gemm.n) ||
        !r.i64(t.gemm.k) || !r.boolean(t.gemm.transA) ||
        !r.boolean(t.gemm.transB) || !r.u8(input) || !r.u8(output) ||
        !r.u32(t.gemm.accumulator) || !r.i64(t.gemm.aView.offset) ||
        !r.i64(t.gemm.aView.batchStride) || !r.i64(t.gemm.bView.offset) ||
        !r.i64(t.gemm.bView.batchStride) || !r.i64(t.gemm.cView.offset) ||
        !r.i64(t.gemm.cView.batchStride) ||
        input > static_cast<uint8_t>(GemmType::f16) ||
        output > static_cast<uint8_t>(GemmType::f16))
      return false;
    t.gemm.input = static_cast<GemmType>(input);
    t.gemm.output = static_cast<GemmType>(output);
    // f32 inputs make f32 results; 16-bit inputs f32 or their own type.
    // An accumulator is added in f32 only; C is viewed only where one is.
    return (t.gemm.output == GemmType::f32 || t.gemm.output == t.gemm.input) &&
           (!t.gemm.accumulates() || t.gemm.output == GemmType::f32) &&
           (t.gemm.cView.packed() || t.gemm.accumulates());
  }
  case Thunk::Kind::copy:
    return r.u32(t.copy.src) && r.u32(t.copy.dst) && r.u64(t.copy.bytes);
  case Thunk::Kind::allReduce: {
    uint8_t element;
    if (!r.u32(t.allReduce.src) || !r.u32(t.allReduce.dst) || !r.u8(element) ||
        element > static_cast<uint8_t>(DType::i64) || !r.i64(t.allReduce.count))
      return false;
    t.allReduce.element = static_cast<DType>(element);
    return isAllReduceType(t.allReduce.element) && t.allReduce.count >= 0 &&
           t.allReduce.count <= kMaxTensorElements;
  }
  case Thunk::Kind::attention: {
    AttentionThunk &a = t.attention;
    uint8_t element;
    int64_t scale, dropout;
    if (!r.boolean(a.gradient))
      return false;
    for (uint32_t *s : {&a.query, &a.key, &a.value, &a.resultGrad,
                        &a.rngState, &a.result, &a.rowStats, &a.queryGrad,
                        &a.keyGrad, &a.valueGrad})
      if (!r.u32(*s))
        return false;
    if (!r.u8(element) || element > static_cast<uint8_t>(GemmType::f16))
      return false;
    a.element = static_cast<GemmType>(element);
    for (int64_t *v : {&a.batch, &a.heads, &a.kvHeads, &a.queries, &a.keys,
                       &a.headDim})
      if (!r.i64(*v))
        return false;
    if (!r.i64(scale) || !r.i64(dropout) || !r.boolean(a.causal) ||
        !r.i64(a.window))
      return false;
    std::memcpy(&a.scale, &scale, sizeof scale);
    std::memcpy(&a.dropout, &dropout, sizeof dropout);
    return true;
  }
  }
  return false;
}

/// The slots an attention thunk names exist and hold its tensors: the
/// operands and results its kind needs, with sizes that cannot wrap.
bool attentionThunkFits(const AttentionThunk &a, const BufferPlan &plan) {
  for (int64_t v : {a.batch, a.heads, a.kvHeads, a.queries, a.keys, a.headDim})
    if (v <= 0 || v >= (1 << 24))
      return false;
  if (a.heads % a.kvHeads != 0 || (a.causal && a.queries != a.keys) ||
      a.window < 0 || (a.window > 0 && !a.causal) || !std::isfinite(a.scale) ||
      !(a.dropout >= 0 && a.dropout < 1) ||
      (a.dropout > 0) != (a.rngState != kNoSlot))
    return false;
  uint64_t element = gemmTypeBytes(a.element);
  // `heads` × `rows` rows of `width` elements of `bytesEach`.
  auto holds = [&](uint32_t slot, int64_t heads, int64_t rows, int64_t width,
                   uint64_t bytesEach) {
    uint64_t bytes = 0;
    return slot < plan.slots.size() &&
           !__builtin_mul_overflow(uint64_t(a.batch), uint64_t(heads),
                                   &bytes) &&
           !__builtin_mul_overflow(bytes, uint64_t(rows * width), &bytes) &&
           !__builtin_mul_overflow(bytes, bytesEach, &bytes) &&
           plan.slots[slot].bytes >= bytes;
  };
  auto fits = [&](uint32_t slot, int64_t heads, int64_t rows) {
    return holds(slot, heads, rows, a.headDim, element);
  };
  // Both kinds name the forward's results (the gradient reads them).
  bool ok = fits(a.query, a.heads, a.queries) &&
            fits(a.key, a.kvHeads, a.keys) &&
            fits(a.value, a.kvHeads, a.keys) &&
            (a.rngState == kNoSlot || (a.rngState < plan.slots.size() &&
                                       plan.slots[a.rngState].bytes >= 16)) &&
            fits(a.result, a.heads, a.queries) &&
            holds(a.rowStats, a.heads, a.queries, 1, sizeof(float));
  if (a.gradient)
    return ok && fits(a.resultGrad, a.heads, a.queries) &&
           fits(a.queryGrad, a.heads, a.queries) &&
           fits(a.keyGrad, a.kvHeads, a.keys) &&
           fits(a.valueGrad, a.kvHeads, a.keys);
  return ok && a.resultGrad == kNoSlot && a.queryGrad == kNoSlot &&
         a.keyGrad == kNoSlot && a.valueGrad == kNoSlot;
}


void writePayload(Writer &w, const Executable &e) {
  w.u8(static_cast<uint8_t>(e.device));
  w.str(e.compilerVersion);
  w.str(e.targetCpu);
  w.str(e.targetFeatures);
  writeValues(w, e.signature.inputs);
  writeValues(w, e.signature.outputs);
  w.u64(e.plan.arenaBytes);
  w.u64(e.plan.slots.size());
  for (const BufferSlot &s : e.plan.slots) {
    w.u8(static_cast<uint8_t>(s.kind));
    w.u32(s.input);
    w.u64(s.offset);
    w.u64(s.bytes);
  }
  w.u64(e.plan.constants.size());
  for (const ConstantInit &c : e.plan.constants) {
    w.u32(c.slot);
    w.str(c.bytes);
  }
  w.u64(e.plan.outputSlots.size());
  for (uint32_t s : e.plan.outputSlots)
    w.u32(s);
  w.u64(e.plan.outputDonors.size());
  for (int32_t d : e.plan.outputDonors)
    w.u32(static_cast<uint32_t>(d));
  w.u8(e.allowTf32 ? 1 : 0);
  w.u64(e.thunks.size());
  for (const Thunk &t : e.thunks)
    writeThunk(w, t);
  w.str(e.kernelLibrary);
}

bool readPayload(Reader &r, Executable &e) {
  uint8_t device;
  if (!r.u8(device) || device > static_cast<uint8_t>(Device::cuda))
    return false;
  e.device = static_cast<Device>(device);
  if (!r.str(e.compilerVersion) || !r.str(e.targetCpu) ||
      !r.str(e.targetFeatures) || !readValues(r, e.signature.inputs) ||
      !readValues(r, e.signature.outputs) || !r.u64(e.plan.arenaBytes))
    return false;
  uint64_t n;
  if (!r.count(n, 21))
    return false;
  e.plan.slots.resize(n);
  for (BufferSlot &s : e.plan.slots) {
    uint8_t kind;
    if (!r.u8(kind) || kind > 2 || !r.u32(s.input) || !r.u64(s.offset) ||
        !r.u64(s.bytes))
      return false;
    s.kind = static_cast<BufferSlot::Kind>(kind);
  }
  if (!r.count(n, 12))
    return false;
  e.plan.constants.resize(n);
  for (ConstantInit &c : e.plan.constants)
    if (!r.u32(c.slot) || !r.str(c.bytes))
      return false;
  if (!r.count(n, 4))
    return false;
  e.plan.outputSlots.resize(n);
  for (uint32_t &s : e.plan.outputSlots)
    if (!r.u32(s))
      return false;
  if (!r.count(n, 4))
    return false;
  e.plan.outputDonors.resize(n);
  for (int32_t &d : e.plan.outputDonors) {
    uint32_t raw;
    if (!r.u32(raw))
      return false;
    d = static_cast<int32_t>(raw);
  }
  if (!r.boolean(e.allowTf32) || !r.count(n, 1))
    return false;
  e.thunks.resize(n);
  for (Thunk &t : e.thunks)
    if (!readThunk(r, t))
      return false;
  return r.str(e.kernelLibrary) && r.atEnd();
}

uint32_t crc(std::string_view bytes) {
  uLong c = crc32(0L, Z_NULL, 0);
  // zlib takes uInt lengths; feed large payloads in pieces.
  for (size_t pos = 0; pos < bytes.size();) {
    size_t n = std::min<size_t>(bytes.size() - pos, 1u << 30);
    c = crc32(c, reinterpret_cast<const Bytef *>(bytes.data() + pos),
              static_cast<uInt>(n));
    pos += n;
  }
  return static_cast<uint32_t>(c);
}

absl::Status invalid(std::string_view what) {
  return absl::DataLossError(
      absl::StrCat("invalid kiln executable: ", std::string(what)));
}

} // namespace

std::string AttentionThunk::label() const {
  std::string text(gradient ? "attention_grad " : "attention ");
  text += gemmTypeName(element);
  absl::StrAppend(&text, " ", batch, "x", heads, "x", queries, "x", headDim);
  absl::StrAppend(&text, " (kv heads ", kvHeads, ", keys ", keys, ")",
                  causal ? " causal" : "");
  if (window > 0)
    absl::StrAppend(&text, " window ", window);
  if (dropout > 0)
    absl::StrAppend(&text, " dropout ", dropout);
  return text;
}

double AttentionThunk::flops() const {
  double products = gradient ? 4 : 2;
  // (query, key) pairs seen: causal T·S / 2 (the kernels' half), or within
  // a window w < T: w(w + 1)/2 for the first w rows, then w a row.
  double pairs = double(queries) * keys * (causal ? 0.5 : 1.0);
  if (causal && window > 0 && window < queries)
    pairs = window * (window + 1.0) / 2 + double(queries - window) * window;
  return products * 2.0 * batch * heads * pairs * headDim;
}

std::vector<uint32_t> AttentionThunk::readSlots() const {
  std::vector<uint32_t> out;
  for (uint32_t s : {query, key, value, resultGrad, rngState})
    if (s != kNoSlot)
      out.push_back(s);
  if (gradient) // the forward's results
    for (uint32_t s : {result, rowStats})
      out.push_back(s);
  return out;
}

std::vector<uint32_t> AttentionThunk::writtenSlots() const {
  std::vector<uint32_t> out;
  if (!gradient)
    for (uint32_t s : {result, rowStats})
      out.push_back(s);
  for (uint32_t s : {queryGrad, keyGrad, valueGrad})
    if (s != kNoSlot)
      out.push_back(s);
  return out;
}

std::string serializeExecutable(const Executable &executable) {
  Writer payload;
  writePayload(payload, executable);
  std::string body = payload.take();
  Writer header;
  std::string out(kMagic, sizeof(kMagic));
  header.u32(kExecutableFormatVersion);
  header.u64(body.size());
  header.u32(crc(body));
  out += header.take();
  out += body;
  return out;
}

absl::StatusOr<Executable> deserializeExecutable(std::string_view bytes) {
  if (bytes.size() < kHeaderBytes)
    return invalid(absl::StrCat("truncated header (", bytes.size(),
                                " bytes, need ", kHeaderBytes, ")"));
  if (std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    return invalid("bad magic: not a kiln executable");
  Reader header(bytes.substr(sizeof(kMagic)));
  uint32_t version, checksum;
  uint64_t length;
  header.u32(version);
  header.u64(length);
  header.u32(checksum);
  if (version != kExecutableFormatVersion)
    return invalid(absl::StrCat("format version ", version,
                                ", this runtime reads version ",
                                kExecutableFormatVersion));
  std::string_view body = bytes.substr(kHeaderBytes);
  if (body.size() != length)
    return invalid(absl::StrCat("payload is ", body.size(),
                                " bytes, header says ", length,
                                " (truncated or padded)"));
  if (crc(body) != checksum)
    return invalid("checksum mismatch: the payload was altered");
  Executable executable;
  Reader reader(body);
  if (!readPayload(reader, executable))
    return invalid("malformed payload");
  if (absl::Status s = validateExecutable(executable); !s.ok())
    return s;
  return executable;
}

absl::Status validateExecutable(const Executable &e) {
  const BufferPlan &plan = e.plan;
  uint32_t numSlots = plan.slots.size();
  for (const BufferSlot &s : plan.slots) {
    if (s.kind == BufferSlot::Kind::input) {
      if (s.input >= e.signature.inputs.size())
        return invalid("a slot names a missing input");
    } else if (s.kind == BufferSlot::Kind::output) {
      if (s.input >= e.signature.outputs.size())
        return invalid("a slot names a missing output");
    } else if (s.offset > plan.arenaBytes ||
               s.bytes > plan.arenaBytes - s.offset) {
      return invalid("a slot lies outside the arena");
    } else if (s.offset % kSlotAlignment != 0) {
      return invalid("an arena slot is not 64-byte aligned");
    }
  }
  auto slotOk = [&](uint32_t s) { return s < numSlots; };
  for (const ConstantInit &c : plan.constants)
    if (!slotOk(c.slot) || plan.slots[c.slot].bytes != c.bytes.size() ||
        plan.slots[c.slot].kind != BufferSlot::Kind::arena)
      return invalid("a constant does not fit its slot");
  if (plan.outputSlots.size() != e.signature.outputs.size())
    return invalid("output count differs from the signature");
  for (uint32_t s : plan.outputSlots)
    if (!slotOk(s))
      return invalid("an output names a missing slot");
  if (plan.outputDonors.size() != plan.outputSlots.size())
    return invalid("output donors differ from the outputs");
  for (size_t o = 0; o < plan.outputSlots.size(); ++o) {
    const BufferSlot &s = plan.slots[plan.outputSlots[o]];
    int32_t d = plan.outputDonors[o];
    if (d >= 0 &&
        (s.kind != BufferSlot::Kind::output || s.input != o ||
         static_cast<size_t>(d) >= e.signature.inputs.size() ||
         !e.signature.inputs[d].donated ||
         e.signature.inputs[d].dtype != e.signature.outputs[o].dtype ||
         e.signature.inputs[d].shape != e.signature.outputs[o].shape))
      return invalid("an output's donor input does not fit it");
  }
  for (const Thunk &t : e.thunks) {
    bool ok = true;
    switch (t.kind) {
    case Thunk::Kind::kernel:
      for (uint32_t s : t.kernel.slots)
        ok = ok && slotOk(s);
      ok = ok && t.kernel.numResults <= t.kernel.slots.size();
      for (uint32_t p : t.kernel.inPlaceOperands)
        ok = ok && p + t.kernel.numResults < t.kernel.slots.size();
      break;
    case Thunk::Kind::gemm:
      ok = slotOk(t.gemm.a) && slotOk(t.gemm.b) && slotOk(t.gemm.c) &&
           t.gemm.batch >= 0 && t.gemm.m >= 0 && t.gemm.n >= 0 &&
           t.gemm.k >= 0 && t.gemm.batch < (1 << 30) && t.gemm.m < (1 << 30) &&
           t.gemm.n < (1 << 30) && t.gemm.k < (1 << 30);
      if (ok) {
        const GemmThunk &g = t.gemm;
        // Each factor is below 2^30, so the product can wrap: a wrapped
        // size would let a tiny slot pass.
        // A viewed operand's last matrix ends offset + (batch - 1) *
        // batchStride + x * y elements in.
        auto need = [&](uint32_t s, int64_t x, int64_t y, uint64_t bytes,
                        GemmOperandView view = {}) {
          uint64_t matrix = 0, total = 0;
          if (view.offset < 0 || view.batchStride < 0 ||
              view.offset >= (int64_t(1) << 48) ||
              view.batchStride >= (int64_t(1) << 48) ||
              __builtin_mul_overflow(uint64_t(x), uint64_t(y), &matrix))
            return false;
          uint64_t stride = view.batchStride ? view.batchStride : matrix;
          if (g.batch == 0)
            return true;
          return !__builtin_mul_overflow(uint64_t(g.batch - 1), stride,
                                         &total) &&
                 !__builtin_add_overflow(total, matrix, &total) &&
                 !__builtin_add_overflow(total, uint64_t(view.offset),
                                         &total) &&
                 !__builtin_mul_overflow(total, bytes, &total) &&
                 plan.slots[s].bytes >= total;
        };
        // A viewed C (only with an accumulator: it defines the rest) has
        // matrices that do not overlap (each is written), and its slots
        // hold every batch's stride (copied whole).
        auto cFits = [&](uint32_t s, uint64_t bytes) {
          if (g.cView.packed())
            return need(s, g.m, g.n, bytes);
          uint64_t total = 0;
          return g.accumulates() && need(s, g.m, g.n, bytes, g.cView) &&
                 g.cView.batchStride >= g.m * g.n + g.cView.offset &&
                 !__builtin_mul_overflow(uint64_t(g.batch),
                                         uint64_t(g.cView.batchStride),
                                         &total) &&
                 !__builtin_mul_overflow(total, bytes, &total) &&
                 plan.slots[s].bytes >= total;
        };
        uint64_t in = gemmTypeBytes(g.input);
        ok = need(g.a, g.m, g.k, in, g.aView) &&
             need(g.b, g.k, g.n, in, g.bView) &&
             cFits(g.c, gemmTypeBytes(g.output)) &&
             (!g.accumulates() ||
              (slotOk(g.accumulator) && cFits(g.accumulator, 4)));
      }
      break;
    case Thunk::Kind::copy:
      ok = slotOk(t.copy.src) && slotOk(t.copy.dst) &&
           plan.slots[t.copy.src].bytes >= t.copy.bytes &&
           plan.slots[t.copy.dst].bytes >= t.copy.bytes;
      break;
    case Thunk::Kind::attention:
      ok = attentionThunkFits(t.attention, plan);
      break;
    case Thunk::Kind::allReduce:
      ok = slotOk(t.allReduce.src) && slotOk(t.allReduce.dst) &&
           plan.slots[t.allReduce.src].bytes >= t.allReduce.bytes() &&
           plan.slots[t.allReduce.dst].bytes >= t.allReduce.bytes();
      break;
    }
    if (!ok)
      return invalid("a thunk names a missing or too small slot");
  }
  return absl::OkStatus();
}

} // namespace kiln::runtime
