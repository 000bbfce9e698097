// Python-compatible float formatting and the terminal progress bar of
// kiln-train (see TrainerLog.h).
#include "examples/TrainerLog.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>

namespace kiln::train {

std::string pythonFloat(double value) {
  if (std::isnan(value))
    return "nan";
  if (std::isinf(value))
    return value < 0 ? "-inf" : "inf";
  if (value == 0)
    return std::signbit(value) ? "-0.0" : "0.0";
  // Python's repr: the fewest significant digits that read back exactly.
  char buf[40];
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*e", precision - 1, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  std::string text(buf);
  std::string sign;
  if (text[0] == '-') {
    sign = "-";
    text.erase(0, 1);
  }
  size_t e = text.find('e');
  int exponent = std::atoi(text.c_str() + e + 1);
  std::string digits;
  for (size_t i = 0; i < e; ++i)
    if (text[i] != '.')
      digits += text[i];
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  // Python switches to scientific notation outside [1e-4, 1e16).
  if (exponent < -4 || exponent >= 16) {
    std::string mantissa = digits.substr(0, 1);
    if (digits.size() > 1)
      mantissa += "." + digits.substr(1);
    std::snprintf(buf, sizeof buf, "e%c%02d", exponent < 0 ? '-' : '+',
                  std::abs(exponent));
    return sign + mantissa + buf;
  }
  if (exponent < 0)
    return sign + "0." + std::string(size_t(-exponent - 1), '0') + digits;
  size_t intDigits = size_t(exponent) + 1;
  if (digits.size() <= intDigits)
    return sign + digits + std::string(intDigits - digits.size(), '0') + ".0";
  return sign + digits.substr(0, intDigits) + "." + digits.substr(intDigits);
}

double pythonRound(double value, int digits) {
  if (!std::isfinite(value))
    return value;
  // printf rounds the exact binary value half-to-even, as Python's round.
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", digits, value);
  return std::strtod(buf, nullptr);
}

std::string logValue(const std::string &key, double value) {
  bool count = key == "step" || key == "eval_samples" ||
               key == "train_samples" || key == "num_input_tokens_seen";
  if (count && std::isfinite(value) && value == std::floor(value) &&
      std::abs(value) < 9e15)
    return std::to_string(static_cast<long long>(value));
  return pythonFloat(value);
}

std::string formatLogDict(const LogDict &dict) {
  std::string out = "{";
  for (size_t i = 0; i < dict.size(); ++i) {
    if (i)
      out += ", ";
    out +=
        "'" + dict[i].first + "': " + logValue(dict[i].first, dict[i].second);
  }
  return out + "}";
}

namespace {
std::string clockText(double seconds) {
  if (!std::isfinite(seconds) || seconds < 0)
    return "?";
  long s = long(seconds);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60,
                  s % 60);
  else
    std::snprintf(buf, sizeof buf, "%02ld:%02ld", s / 60, s % 60);
  return buf;
}
} // namespace

ProgressBar::ProgressBar(int64_t total, int64_t initial, bool enabled)
    : enabled_(enabled && isatty(STDERR_FILENO) != 0), total_(total),
      initial_(initial), position_(initial),
      start_(std::chrono::steady_clock::now()), lastDraw_(start_) {}

void ProgressBar::update(int64_t step) {
  position_ = step;
  auto now = std::chrono::steady_clock::now();
  if (!enabled_ || (drawn_ && now - lastDraw_ < std::chrono::milliseconds(100)))
    return;
  lastDraw_ = now;
  draw();
}

void ProgressBar::clear() {
  if (enabled_ && drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }
}

void ProgressBar::finish() {
  if (!enabled_)
    return;
  draw();
  std::fputc('\n', stderr);
  drawn_ = false;
}

void ProgressBar::draw() {
  double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_)
          .count();
  int64_t done = position_ - initial_;
  double rate = elapsed > 0 ? double(done) / elapsed : 0;
  double remaining = rate > 0 ? double(total_ - position_) / rate : -1;
  double fraction = total_ > 0 ? double(position_) / double(total_) : 1;
  const int width = 30;
  int filled = int(fraction * width);
  std::string bar;
  for (int i = 0; i < width; ++i)
    bar += i < filled ? "\u2588" : " ";
  std::fprintf(stderr, "\r\033[K%3d%%|%s| %lld/%lld [%s<%s, %.2fit/s]",
               int(fraction * 100), bar.c_str(), (long long)position_,
               (long long)total_, clockText(elapsed).c_str(),
               clockText(remaining).c_str(), rate);
  std::fflush(stderr);
  drawn_ = true;
}

} // namespace kiln::train
