// The message of the kiln::Error a call throws, for the tests of user
// errors, which compare whole messages as a user reads them.
#ifndef KILN_TESTS_UNIT_ERRORMESSAGE_H
#define KILN_TESTS_UNIT_ERRORMESSAGE_H

#include "frontends/lazy/Tensor.h"

#include <string>

namespace kiln {

/// call() → the message of the kiln::Error it throws, or "" when it
/// throws none.
template <class Call> std::string errorMessageOf(Call call) {
  try {
    call();
  } catch (const Error &e) {
    return e.what();
  }
  return "";
}

} // namespace kiln

#endif // KILN_TESTS_UNIT_ERRORMESSAGE_H
