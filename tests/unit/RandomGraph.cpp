// RandomGraph: op generators tried in random order until one applies. Each
// generator returns false when no value fits its operand types.
#include "RandomGraph.h"

#include "CpuTestSupport.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

#include <algorithm>
#include <functional>
#include <numeric>

namespace kiln::testing {

namespace {

std::string typeOf(const GraphValue &v) {
  return HostTensor(v.dtype, v.shape).typeString();
}

std::string list(const std::vector<int64_t> &v) {
  return absl::StrCat("[", absl::StrJoin(v, ", "), "]");
}

int64_t numElements(const std::vector<int64_t> &shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

class Generator {
public:
  Generator(std::mt19937 &rng, RandomGraph &g) : rng_(rng), g_(g) {}

  void run(int numOps);

private:
  int pick(int n) { return static_cast<int>(rng_() % n); }
  std::vector<int64_t> randomShape(int maxRank = 3);
  int addInput(DType dtype, std::vector<int64_t> shape, HostTensor data = {});
  int addValue(DType dtype, std::vector<int64_t> shape, double scale,
               bool exact);
  /// A random existing value satisfying `ok`, or -1.
  int find(const std::function<bool(const GraphValue &)> &ok);
  void emit(std::string text, std::vector<int> operands,
            std::vector<int> results) {
    g_.ops.push_back(
        {std::move(text), std::move(operands), std::move(results)});
  }
  const GraphValue &v(int i) { return g_.values[i]; }

  bool unary();
  bool binary();
  bool compare();
  bool select();
  bool convert();
  bool broadcast();
  bool reshape();
  bool transpose();
  bool slice();
  bool concatenate();
  bool pad();
  bool reduce();
  bool dot();
  bool gather();
  bool scatter();
  bool source();
  bool fusion();

  std::mt19937 &rng_;
  RandomGraph &g_;
};

std::vector<int64_t> Generator::randomShape(int maxRank) {
  std::vector<int64_t> shape(pick(maxRank + 1));
  for (int64_t &d : shape)
    d = 1 + pick(4);
  return shape;
}

int Generator::addInput(DType dtype, std::vector<int64_t> shape,
                        HostTensor data) {
  if (data.data() == nullptr)
    data = randomTensor(dtype, shape, rng_);
  int i = addValue(dtype, std::move(shape), 1, true);
  g_.values[i].isInput = true;
  // Donated inputs exercise in-place updates of elementwise outputs.
  g_.values[i].donated = pick(3) == 0;
  g_.values[i].name = absl::StrCat("%in", g_.inputData.size());
  g_.inputData.push_back(std::move(data));
  return i;
}

int Generator::addValue(DType dtype, std::vector<int64_t> shape, double scale,
                        bool exact) {
  GraphValue value{absl::StrCat("%v", g_.values.size()),
                   dtype,
                   std::move(shape),
                   /*isInput=*/false,
                   /*donated=*/false,
                   scale,
                   exact};
  g_.values.push_back(std::move(value));
  return g_.values.size() - 1;
}

int Generator::find(const std::function<bool(const GraphValue &)> &ok) {
  std::vector<int> fits;
  for (size_t i = 0; i < g_.values.size(); ++i)
    if (ok(g_.values[i]))
      fits.push_back(i);
  return fits.empty() ? -1 : fits[pick(fits.size())];
}

bool Generator::unary() {
  static const char *smooth[] = {"neg",  "abs",  "exp",   "log",      "log1p",
                                 "tanh", "sqrt", "rsqrt", "logistic", "erf"};
  bool jumpy = pick(4) == 0; // floor and sign: exact operands only
  int a = find([&](const GraphValue &x) {
    return x.dtype == DType::f32 && (!jumpy || x.exact);
  });
  if (a < 0)
    return false;
  std::string op = jumpy ? (pick(2) ? "floor" : "sign") : smooth[pick(10)];
  bool inexact = op != "neg" && op != "abs" && op != "floor" && op != "sign";
  int r = addValue(DType::f32, v(a).shape, v(a).scale * (inexact ? 8 : 1),
                   v(a).exact && !inexact);
  emit(absl::StrCat(v(r).name, " = kiln.", op, " ", v(a).name, " : ",
                    typeOf(v(a))),
       {a}, {r});
  return true;
}

bool Generator::binary() {
  int a = find([](const GraphValue &x) {
    return x.dtype == DType::f32 || x.dtype == DType::i32 ||
           x.dtype == DType::i64;
  });
  if (a < 0)
    return false;
  int b = find([&](const GraphValue &x) {
    return x.dtype == v(a).dtype && x.shape == v(a).shape;
  });
  bool isF = v(a).dtype == DType::f32;
  static const char *fops[] = {"add", "sub", "mul", "div", "max", "min", "pow"};
  static const char *iops[] = {"add", "sub", "mul", "div",
                               "max", "min", "and", "or"};
  std::string op = isF ? fops[pick(7)] : iops[pick(8)];
  bool inexact = op == "pow";
  double scale = std::max(v(a).scale, v(b).scale) * (inexact ? 8 : 1);
  int r = addValue(v(a).dtype, v(a).shape, scale,
                   v(a).exact && v(b).exact && !inexact);
  emit(absl::StrCat(v(r).name, " = kiln.", op, " ", v(a).name, ", ", v(b).name,
                    " : ", typeOf(v(a))),
       {a, b}, {r});
  return true;
}

bool Generator::compare() {
  int a =
      find([](const GraphValue &x) { return x.dtype != DType::i1 && x.exact; });
  if (a < 0)
    return false;
  int b = find([&](const GraphValue &x) {
    return x.dtype == v(a).dtype && x.shape == v(a).shape && x.exact;
  });
  static const char *dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  int r = addValue(DType::i1, v(a).shape, 1, true);
  emit(absl::StrCat(v(r).name, " = kiln.compare ", dirs[pick(6)], ", ",
                    v(a).name, ", ", v(b).name, " : ", typeOf(v(a))),
       {a, b}, {r});
  return true;
}

bool Generator::select() {
  int p = find([](const GraphValue &x) { return x.dtype == DType::i1; });
  if (p < 0)
    return false;
  int a = find([&](const GraphValue &x) { return x.shape == v(p).shape; });
  int b = find([&](const GraphValue &x) {
    return x.shape == v(p).shape && x.dtype == v(a).dtype;
  });
  bool clamp = v(a).dtype != DType::i1 && pick(2);
  int r = addValue(v(a).dtype, v(a).shape, std::max(v(a).scale, v(b).scale),
                   v(a).exact && v(b).exact);
  if (clamp)
    emit(absl::StrCat(v(r).name, " = kiln.clamp ", v(b).name, ", ", v(a).name,
                      ", ", v(a).name, " : ", typeOf(v(a))),
         {a, b}, {r});
  else
    emit(absl::StrCat(v(r).name, " = kiln.select ", v(p).name, ", ", v(a).name,
                      ", ", v(b).name, " : ", typeOf(v(p)), ", ", typeOf(v(a))),
         {p, a, b}, {r});
  return true;
}

bool Generator::convert() {
  static const DType types[] = {DType::f32, DType::i32, DType::i1, DType::f16,
                                DType::i64};
  DType to = types[pick(5)];
  bool toInt = !isFloat(to);
  int a = find([&](const GraphValue &x) {
    return x.exact || (!toInt && x.dtype == DType::f32);
  });
  if (a < 0)
    return false;
  // f16 values convert back to f32 at once: kiln ops here compute in f32.
  int r = addValue(to, v(a).shape, v(a).scale, v(a).exact);
  std::string text = absl::StrCat(v(r).name, " = kiln.convert ", v(a).name,
                                  " : ", typeOf(v(a)), " -> ", typeOf(v(r)));
  if (to == DType::f16) {
    // Rounding an inexact value to f16 may land on the neighbouring f16.
    double scale = v(a).exact ? v(a).scale : v(a).scale * 2000;
    g_.values[r].scale = scale;
    int back = addValue(DType::f32, v(a).shape, scale, v(a).exact);
    text += absl::StrCat("\n  ", v(back).name, " = kiln.convert ", v(r).name,
                         " : ", typeOf(v(r)), " -> ", typeOf(v(back)));
    emit(text, {a}, {r, back});
    return true;
  }
  emit(text, {a}, {r});
  return true;
}

bool Generator::broadcast() {
  int a = find([](const GraphValue &x) { return x.shape.size() < 4; });
  if (a < 0)
    return false;
  std::vector<int64_t> shape = v(a).shape;
  // Expand one size-1 dimension, then insert a new one.
  std::vector<int64_t> dims(shape.size());
  std::iota(dims.begin(), dims.end(), 0);
  std::vector<int64_t> out = shape;
  for (int64_t &d : out)
    if (d == 1 && pick(2))
      d = 2 + pick(2);
  int at = pick(out.size() + 1);
  out.insert(out.begin() + at, 1 + pick(3));
  for (int64_t &d : dims)
    if (d >= at)
      ++d;
  int r = addValue(v(a).dtype, out, v(a).scale, v(a).exact);
  emit(absl::StrCat(v(r).name, " = kiln.broadcast_in_dim ", v(a).name,
                    ", dims = ", list(dims), " : ", typeOf(v(a)), " -> ",
                    typeOf(v(r))),
       {a}, {r});
  return true;
}

bool Generator::reshape() {
  int a = find([](const GraphValue &) { return true; });
  std::vector<int64_t> out;
  int64_t n = numElements(v(a).shape);
  if (pick(2) && n % 2 == 0 && n > 0)
    out = {2, n / 2};
  else if (n != 1 || pick(2))
    out = {n};
  int r = addValue(v(a).dtype, out, v(a).scale, v(a).exact);
  emit(absl::StrCat(v(r).name, " = kiln.reshape ", v(a).name, " : ",
                    typeOf(v(a)), " -> ", typeOf(v(r))),
       {a}, {r});
  return true;
}

bool Generator::transpose() {
  int a = find([](const GraphValue &x) { return x.shape.size() >= 2; });
  if (a < 0)
    return false;
  std::vector<int64_t> perm(v(a).shape.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::shuffle(perm.begin(), perm.end(), rng_);
  std::vector<int64_t> out;
  for (int64_t p : perm)
    out.push_back(v(a).shape[p]);
  int r = addValue(v(a).dtype, out, v(a).scale, v(a).exact);
  emit(absl::StrCat(v(r).name, " = kiln.transpose ", v(a).name, ", perm = ",
                    list(perm), " : ", typeOf(v(a)), " -> ", typeOf(v(r))),
       {a}, {r});
  return true;
}

bool Generator::slice() {
  int a = find([](const GraphValue &x) { return x.shape.size() >= 1; });
  if (a < 0)
    return false;
  std::vector<int64_t> start, limit, strides, out;
  for (int64_t d : v(a).shape) {
    int64_t s = pick(d), l = s + 1 + pick(d - s), st = 1 + pick(2);
    start.push_back(s);
    limit.push_back(l);
    strides.push_back(st);
    out.push_back((l - s + st - 1) / st);
  }
  int r = addValue(v(a).dtype, out, v(a).scale, v(a).exact);
  emit(absl::StrCat(v(r).name, " = kiln.slice ", v(a).name,
                    ", start = ", list(start), ", limit = ", list(limit),
                    ", strides = ", list(strides), " : ", typeOf(v(a)), " -> ",
                    typeOf(v(r))),
       {a}, {r});
  return true;
}

bool Generator::concatenate() {
  int a = find([](const GraphValue &x) { return x.shape.size() >= 1; });
  if (a < 0)
    return false;
  int dim = pick(v(a).shape.size());
  int b = find([&](const GraphValue &x) {
    if (x.dtype != v(a).dtype || x.shape.size() != v(a).shape.size())
      return false;
    for (size_t k = 0; k < x.shape.size(); ++k)
      if (static_cast<int>(k) != dim && x.shape[k] != v(a).shape[k])
        return false;
    return true;
  });
  std::vector<int64_t> out = v(a).shape;
  out[dim] += v(b).shape[dim];
  int r = addValue(v(a).dtype, out, std::max(v(a).scale, v(b).scale),
                   v(a).exact && v(b).exact);
  emit(absl::StrCat(v(r).name, " = kiln.concatenate ", v(a).name, ", ",
                    v(b).name, ", dim = ", dim, " : (", typeOf(v(a)), ", ",
                    typeOf(v(b)), ") -> ", typeOf(v(r))),
       {a, b}, {r});
  return true;
}

bool Generator::pad() {
  int a = find([](const GraphValue &x) {
    return x.shape.size() >= 1 && x.dtype != DType::i1;
  });
  if (a < 0)
    return false;
  std::vector<int64_t> low, high, out;
  for (int64_t d : v(a).shape) {
    low.push_back(pick(3));
    high.push_back(pick(3));
    out.push_back(d + low.back() + high.back());
  }
  int pv = addInput(v(a).dtype, {});
  int r = addValue(v(a).dtype, out, v(a).scale, v(a).exact);
  emit(absl::StrCat(v(r).name, " = kiln.pad ", v(a).name, ", ", v(pv).name,
                    ", low = ", list(low), ", high = ", list(high), " : ",
                    typeOf(v(a)), ", ", typeOf(v(pv)), " -> ", typeOf(v(r))),
       {a, pv}, {r});
  return true;
}

bool Generator::reduce() {
  int a = find([](const GraphValue &x) { return x.dtype != DType::i1; });
  if (a < 0)
    return false;
  std::vector<int64_t> dims, out;
  int64_t length = 1;
  for (size_t k = 0; k < v(a).shape.size(); ++k) {
    if (pick(2)) {
      dims.push_back(k);
      length *= v(a).shape[k];
    } else {
      out.push_back(v(a).shape[k]);
    }
  }
  static const char *kinds[] = {"sum", "max", "min", "prod"};
  std::string kind = kinds[pick(length <= 8 ? 4 : 3)];
  bool inexact = (kind == "sum" || kind == "prod") && isFloat(v(a).dtype);
  int r =
      addValue(v(a).dtype, out, v(a).scale * (inexact ? 2.0 * (length + 1) : 1),
               v(a).exact && !inexact);
  emit(absl::StrCat(v(r).name, " = kiln.reduce ", kind, " ", v(a).name,
                    ", dims = ", list(dims), " : ", typeOf(v(a)), " -> ",
                    typeOf(v(r))),
       {a}, {r});
  return true;
}

bool Generator::dot() {
  int a = find([](const GraphValue &x) {
    return (x.dtype == DType::f32 || x.dtype == DType::i32) &&
           !x.shape.empty() && x.shape.size() <= 3;
  });
  if (a < 0)
    return false;
  const std::vector<int64_t> &s = v(a).shape;
  int64_t r = s.size();
  std::vector<int64_t> wShape, out;
  std::string dims;
  int64_t k = s.back();
  if (r >= 2 && pick(2)) {
    // Batched: [b, ..., k] · [b, k, n].
    int64_t n = 1 + pick(5);
    wShape = {s[0], k, n};
    out.assign(s.begin(), s.end() - 1);
    out.push_back(n);
    dims = absl::StrCat("batch = [0] x [0], contract = [", r - 1, "] x [1]");
  } else {
    // Plain or transposed weight: [..., k] · [k, n] or [n, k].
    int64_t n = 1 + pick(5);
    bool transposed = pick(2);
    wShape =
        transposed ? std::vector<int64_t>{n, k} : std::vector<int64_t>{k, n};
    out.assign(s.begin(), s.end() - 1);
    out.push_back(n);
    dims = absl::StrCat("batch = [] x [], contract = [", r - 1, "] x [",
                        transposed ? 1 : 0, "]");
  }
  // Finite weights: GEMM libraries need not order NaN/Inf sums as we do.
  HostTensor wData = randomTensor(v(a).dtype, wShape, rng_, 2, false);
  int w = addInput(v(a).dtype, wShape, std::move(wData));
  bool isF = v(a).dtype == DType::f32;
  int res = addValue(v(a).dtype, out, v(a).scale * (isF ? 4.0 * (k + 1) : 1),
                     v(a).exact && !isF);
  emit(absl::StrCat(v(res).name, " = kiln.dot_general ", v(a).name, ", ",
                    v(w).name, ", ", dims, " : ", typeOf(v(a)), ", ",
                    typeOf(v(w)), " -> ", typeOf(v(res))),
       {a, w}, {res});
  return true;
}

bool Generator::gather() {
  int a = find([](const GraphValue &x) {
    return !x.shape.empty() && x.shape.size() <= 3;
  });
  if (a < 0)
    return false;
  int axis = pick(v(a).shape.size());
  int64_t n = v(a).shape[axis];
  std::vector<int64_t> iShape =
      pick(2) ? std::vector<int64_t>{1 + pick(3)} : std::vector<int64_t>{};
  HostTensor idx(pick(2) ? DType::i32 : DType::i64, iShape);
  for (int64_t i = 0; i < idx.numElements(); ++i)
    idx.setInt(i, pick(n + 4) - 2);
  int ind = addInput(idx.dtype(), iShape, idx);
  std::vector<int64_t> out(v(a).shape.begin(), v(a).shape.begin() + axis);
  out.insert(out.end(), iShape.begin(), iShape.end());
  out.insert(out.end(), v(a).shape.begin() + axis + 1, v(a).shape.end());
  int r = addValue(v(a).dtype, out, v(a).scale, v(a).exact);
  emit(absl::StrCat(v(r).name, " = kiln.gather ", v(a).name, "[", v(ind).name,
                    "], axis = ", axis, " : ", typeOf(v(a)), ", ",
                    typeOf(v(ind)), " -> ", typeOf(v(r))),
       {a, ind}, {r});
  return true;
}

bool Generator::scatter() {
  int a = find([](const GraphValue &x) {
    return !x.shape.empty() && x.dtype != DType::i1;
  });
  if (a < 0)
    return false;
  int axis = pick(v(a).shape.size());
  int64_t n = v(a).shape[axis];
  std::vector<int64_t> iShape = {1 + pick(4)};
  HostTensor idx(DType::i32, iShape);
  for (int64_t i = 0; i < idx.numElements(); ++i)
    idx.setInt(i, pick(n + 2) - 1);
  int ind = addInput(DType::i32, iShape, idx);
  std::vector<int64_t> uShape(v(a).shape.begin(), v(a).shape.begin() + axis);
  uShape.push_back(iShape[0]);
  uShape.insert(uShape.end(), v(a).shape.begin() + axis + 1, v(a).shape.end());
  int u = addInput(v(a).dtype, uShape);
  bool isF = isFloat(v(a).dtype);
  int r = addValue(v(a).dtype, v(a).shape, v(a).scale * (isF ? 10 : 1),
                   v(a).exact && !isF);
  emit(absl::StrCat(v(r).name, " = kiln.scatter_add ", v(a).name, "[",
                    v(ind).name, "], ", v(u).name, ", axis = ", axis, " : ",
                    typeOf(v(a)), ", ", typeOf(v(ind)), ", ", typeOf(v(u))),
       {a, ind, u}, {r});
  return true;
}

bool Generator::source() {
  std::vector<int64_t> shape = randomShape(4);
  switch (pick(3)) {
  case 0: {
    if (shape.empty())
      shape = {3};
    int dim = pick(shape.size());
    DType t = pick(2) ? DType::f32 : DType::i32;
    int r = addValue(t, shape, 1, true);
    emit(absl::StrCat(v(r).name, " = kiln.iota dim = ", dim, " : ",
                      typeOf(v(r))),
         {}, {r});
    return true;
  }
  case 1: {
    int r = addValue(DType::f32, shape, 1, true);
    emit(absl::StrCat(v(r).name, " = kiln.constant dense<",
                      pick(2) ? "-0.5" : "3.25", "> : ", typeOf(v(r))),
         {}, {r});
    return true;
  }
  default: {
    HostTensor state(DType::i64, {2});
    state.setInt(0, static_cast<int64_t>(rng_()) << 20 | rng_());
    state.setInt(1, static_cast<int64_t>(rng_()));
    int s = addInput(DType::i64, {2}, state);
    int r = addValue(DType::f32, shape, 1, true);
    int ns = addValue(DType::i64, {2}, 1, true);
    emit(absl::StrCat(v(r).name, ", ", v(ns).name, " = kiln.rng_uniform ",
                      v(s).name, " : ", typeOf(v(s)), " -> ", typeOf(v(r))),
         {s}, {r, ns});
    return true;
  }
  }
}

bool Generator::fusion() {
  // An elementwise kiln.fusion of 2-4 ops over one or two f32 values, with
  // one or two results: the CPU backend emits it as one kernel.
  int a = find([](const GraphValue &x) { return x.dtype == DType::f32; });
  if (a < 0)
    return false;
  int b = find([&](const GraphValue &x) {
    return x.dtype == DType::f32 && x.shape == v(a).shape;
  });
  std::string t = typeOf(v(a));
  std::string id = absl::StrCat("%fz", g_.ops.size());
  std::vector<std::string> names = {id + "_x", id + "_y"};
  std::string body;
  double scale = std::max(v(a).scale, v(b).scale);
  bool exact = v(a).exact && v(b).exact;
  static const char *binary[] = {"add", "sub", "mul", "max", "min"};
  static const char *unary[] = {"neg", "abs", "tanh", "exp", "logistic"};
  int n = 2 + pick(3);
  for (int k = 0; k < n; ++k) {
    std::string name = absl::StrCat(id, "_", k);
    std::string x = names[pick(names.size())];
    if (pick(2)) {
      body += absl::StrCat("    ", name, " = kiln.", binary[pick(5)], " ", x,
                           ", ", names[pick(names.size())], " : ", t, "\n");
    } else {
      std::string op = unary[pick(5)];
      bool inexact = op != "neg" && op != "abs";
      scale *= inexact ? 8 : 1;
      exact = exact && !inexact;
      body +=
          absl::StrCat("    ", name, " = kiln.", op, " ", x, " : ", t, "\n");
    }
    names.push_back(name);
  }
  bool two = pick(2);
  std::string yielded = names.back();
  std::string types = t;
  if (two) {
    yielded += ", " + names[names.size() - 2];
    types += ", " + t;
  }
  std::string result = absl::StrCat("%v", g_.values.size());
  std::vector<int> results;
  for (int k = 0; k < (two ? 2 : 1); ++k) {
    int r = addValue(DType::f32, v(a).shape, scale, exact);
    g_.values[r].name = two ? absl::StrCat(result, "#", k) : result;
    results.push_back(r);
  }
  emit(absl::StrCat(result, two ? ":2" : "", " = kiln.fusion loop(", v(a).name,
                    ", ", v(b).name, ") : (", t, ", ", t, ") -> (", types,
                    ") {\n  ^bb0(", names[0], ": ", t, ", ", names[1], ": ", t,
                    "):\n", body, "    kiln.yield ", yielded, " : ", types,
                    "\n  }"),
       {a, b}, results);
  return true;
}

void Generator::run(int numOps) {
  int inputs = 1 + pick(3);
  for (int i = 0; i < inputs; ++i)
    addInput(pick(5) ? DType::f32 : DType::i32, randomShape(4));
  using Step = bool (Generator::*)();
  static const Step steps[] = {
      &Generator::unary,     &Generator::unary,     &Generator::binary,
      &Generator::binary,    &Generator::compare,   &Generator::select,
      &Generator::convert,   &Generator::broadcast, &Generator::reshape,
      &Generator::transpose, &Generator::slice,     &Generator::concatenate,
      &Generator::pad,       &Generator::reduce,    &Generator::dot,
      &Generator::gather,    &Generator::scatter,   &Generator::source,
      &Generator::fusion};
  constexpr int numSteps = sizeof(steps) / sizeof(steps[0]);
  for (int made = 0; made < numOps;)
    if ((this->*steps[pick(numSteps)])())
      ++made;
}

} // namespace

RandomGraph RandomGraph::generate(std::mt19937 &rng, int numOps) {
  RandomGraph graph;
  Generator(rng, graph).run(numOps);
  return graph;
}

std::vector<int> RandomGraph::allResults() const {
  std::vector<int> out;
  for (const GraphOp &op : ops)
    out.insert(out.end(), op.results.begin(), op.results.end());
  return out;
}

std::string RandomGraph::toMlir(std::vector<int> outputs) const {
  if (outputs.empty())
    outputs = allResults();
  // Keep only the ops `outputs` depend on.
  std::vector<bool> needed(values.size(), false);
  for (int o : outputs)
    needed[o] = true;
  std::vector<bool> keep(ops.size(), false);
  for (int i = static_cast<int>(ops.size()) - 1; i >= 0; --i) {
    for (int r : ops[i].results)
      keep[i] = keep[i] || needed[r];
    if (keep[i])
      for (int a : ops[i].operands)
        needed[a] = true;
  }
  std::vector<std::string> args, types, names;
  for (const GraphValue &v : values)
    if (v.isInput)
      args.push_back(absl::StrCat(v.name, ": ", typeOf(v),
                                  v.donated ? " {kiln.donate}" : ""));
  for (int o : outputs) {
    names.push_back(values[o].name);
    types.push_back(typeOf(values[o]));
  }
  std::string body;
  for (size_t i = 0; i < ops.size(); ++i)
    if (keep[i])
      body += absl::StrCat("  ", ops[i].text, "\n");
  return absl::StrCat("func.func @main(", absl::StrJoin(args, ", "), ") -> (",
                      absl::StrJoin(types, ", "), ") {\n", body, "  return ",
                      absl::StrJoin(names, ", "), " : ",
                      absl::StrJoin(types, ", "), "\n}\n");
}

} // namespace kiln::testing
