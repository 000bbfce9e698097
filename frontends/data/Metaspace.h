// SentencePiece's way into BPE, as Hugging Face's tokenizer.json writes it for
// Llama 2, Mistral, TinyLlama and Gemma: spaces become "▁" (U+2581) and a
// "▁" may be put before the text, then BPE starts from characters rather than
// bytes (bytes, as <0xNN> tokens, only for characters the vocabulary lacks).
// Three layouts say this: the Prepend + Replace normalizer with no
// pre-tokenizer (the files of Llama 2's era), the Metaspace pre-tokenizer
// with no normalizer (newer conversions) and Gemma's Replace normalizer
// alone, which puts nothing first. The first two differ in when the "▁" is
// put first: the normalizer puts it before every span between special
// tokens, the pre-tokenizer only where the span does not start with one
// already, and with prepend_scheme "first" only before the span that opens
// the text.
#ifndef KILN_FRONTENDS_DATA_METASPACE_H
#define KILN_FRONTENDS_DATA_METASPACE_H

#include <string>
#include <string_view>
#include <vector>

namespace kiln::data {

struct Metaspace {
  /// What stands for a space in the vocabulary.
  std::string replacement = "\u2581";
  enum class Prepend {
    /// Before every span between special tokens.
    always,
    /// Only before the span at the very start of the text.
    first,
    never,
  };
  Prepend prepend = Prepend::always;
  /// Put first even before a replacement already there (the Prepend
  /// normalizer), rather than only where the span does not start with one
  /// (the Metaspace pre-tokenizer).
  bool prependUnconditionally = false;
  /// Split before every replacement, each piece starting with one (the
  /// pre-tokenizer's split); else each span is one piece.
  bool split = false;
  /// Decoding drops the space the first token starts with (the decoder's
  /// Strip, or a Metaspace decoder that prepends).
  bool stripFirstSpace = true;
};

/// Where a span of the input between special tokens stands, which decides
/// whether a "▁" is put before it.
enum class SpanAt {
  /// It opens the text: "always" and "first" prepend.
  textStart,
  /// It follows a special token: "always" prepends.
  afterSpecialToken,
  /// It opens text that continues an earlier text (an instruction's
  /// response after its prompt, encoded apart): nothing is put first, as
  /// the two encoded together would have it.
  continuation,
};

/// One span of the input between special tokens → the pieces BPE encodes,
/// spaces replaced.
std::vector<std::string> metaspacePieces(std::string_view span, SpanAt at,
                                         const Metaspace &metaspace);

/// A vocabulary symbol → the text it decodes to: the replacement as a
/// space, and a byte token (<0x0A>) as its byte.
std::string metaspaceSymbolText(std::string_view symbol,
                                const Metaspace &metaspace);

/// The byte token's symbol for `byte` ("<0x0A>"), as the vocabulary has it.
std::string byteFallbackSymbol(unsigned char byte);

} // namespace kiln::data

#endif // KILN_FRONTENDS_DATA_METASPACE_H
