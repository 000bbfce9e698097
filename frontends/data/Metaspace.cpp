// Replacing spaces, prepending and splitting as Hugging Face's Prepend +
// Replace normalizers and Metaspace pre-tokenizer do (tokenizers 0.23).
#include "frontends/data/Metaspace.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"

namespace kiln::data {

std::vector<std::string> metaspacePieces(std::string_view span, SpanAt at,
                                         const Metaspace &metaspace) {
  if (span.empty())
    return {};
  const std::string &r = metaspace.replacement;
  std::string text = absl::StrReplaceAll(
      absl::string_view(span.data(), span.size()), {{" ", r}});
  bool prepend = at != SpanAt::continuation &&
                 (metaspace.prepend == Metaspace::Prepend::always ||
                  (metaspace.prepend == Metaspace::Prepend::first &&
                   at == SpanAt::textStart));
  if (prepend && (metaspace.prependUnconditionally ||
                  std::string_view(text).substr(0, r.size()) != r))
    text.insert(0, r);
  if (!metaspace.split)
    return {std::move(text)};
  // Each replacement starts a piece (the split's MergedWithNext).
  std::vector<std::string> pieces;
  size_t start = 0;
  for (size_t at = text.find(r, 1); at != std::string::npos;
       at = text.find(r, at + r.size())) {
    if (at > start)
      pieces.push_back(text.substr(start, at - start));
    start = at;
  }
  pieces.push_back(text.substr(start));
  return pieces;
}

namespace {

// An upper-case hex digit's value, or -1 (byte tokens are written "<0x0A>").
int hexDigit(char c) {
  return c >= '0' && c <= '9'   ? c - '0'
         : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                : -1;
}

} // namespace

std::string metaspaceSymbolText(std::string_view symbol,
                                const Metaspace &metaspace) {
  if (symbol.size() == 6 && symbol.substr(0, 3) == "<0x" && symbol[5] == '>' &&
      hexDigit(symbol[3]) >= 0 && hexDigit(symbol[4]) >= 0)
    return std::string(1, char(hexDigit(symbol[3]) * 16 + hexDigit(symbol[4])));
  return absl::StrReplaceAll(absl::string_view(symbol.data(), symbol.size()),
                             {{metaspace.replacement, " "}});
}

std::string byteFallbackSymbol(unsigned char byte) {
  return absl::StrFormat("<0x%02X>", byte);
}

} // namespace kiln::data
