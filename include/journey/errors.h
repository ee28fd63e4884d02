// Typed errors. The library throws; only main() maps them to messages and exit codes.
//   0 success, 1 bad usage, 2 unusable model or tokenizer file, 3 bad input or runtime failure.
#pragma once
#include <stdexcept>
#include <string>

namespace journey {

class Error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
    virtual int exit_code() const = 0;
};

// A flag or argument the user got wrong. Name the flag in the message.
class UsageError : public Error {
public:
    using Error::Error;
    int exit_code() const override { return 1; }
};

// A model, weights or tokenizer file we cannot use. Name the file (and line/tensor) in the message.
class ModelError : public Error {
public:
    using Error::Error;
    int exit_code() const override { return 2; }
};

// Bad input text/ids, or a failure while running.
class InputError : public Error {
public:
    using Error::Error;
    int exit_code() const override { return 3; }
};

}  // namespace journey
