// Unicode normalization form C, the "NFC" normalizer of tokenizer.json
// (Qwen2's and Qwen3's tokenizers): canonically equivalent spellings of a
// text ("e" + U+0301 and "é") become one spelling before pre-tokenisation,
// so they get the same ids. utf8proc does the normalizing.
#ifndef KILN_FRONTENDS_DATA_NORMALIZE_H
#define KILN_FRONTENDS_DATA_NORMALIZE_H

#include <string>
#include <string_view>

namespace kiln::data {

/// `text` in NFC. Bytes that are not valid UTF-8 (decodeUtf8's rule) are
/// kept as they are and the valid runs between them normalized one by one,
/// so arbitrary bytes still tokenize (Hugging Face's tokenizers only ever
/// see valid text).
std::string nfc(std::string_view text);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_NORMALIZE_H
