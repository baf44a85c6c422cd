// Result<T>: every library boundary's error type (docs/development.md), until std::expected.
//
// An Error carries a machine-readable code and one sentence for a person: what was wrong and
// what to do about it. Messages never contain secrets; they may be shown, logged and audited.
#pragma once

#include <cassert>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace sealtrain {

enum class ErrorCode {
    InvalidArgument,     // the caller asked for something malformed
    NotFound,            // a file, object or record that does not exist
    AlreadyExists,       // would overwrite something that must not be overwritten
    PermissionDenied,    // the caller's identity or role does not allow it
    FailedPrecondition,  // the target is not in the state the call needs (a job already ended)
    Unauthenticated,     // wrong passphrase, key, password or signature
    Integrity,           // data was altered, truncated or is not what it claims to be
    Unsupported,         // a format version or suite this build does not know
    ResourceExhausted,   // disk, memory or a quota ran out
    Io,                  // the operating system refused a read or write
    Internal,            // a bug: an invariant of ours did not hold
};

[[nodiscard]] const char* errorCodeName(ErrorCode code) noexcept;

// Why a refusal was made, for programs (the audit entry's reason_code, docs/formats/audit.md):
// one of the names the code declares (core/access/reason_codes.h). Made at compile time only, from
// a literal, so that no text a caller wrote can ever become one.
class ReasonCode final {
public:
    consteval explicit ReasonCode(const char* name)
        : name_(name)
    {
    }
    [[nodiscard]] constexpr std::string_view name() const noexcept { return name_; }
    friend constexpr bool operator==(ReasonCode a, ReasonCode b) noexcept
    {
        return a.name() == b.name();
    }

private:
    const char* name_;
};

class Error final {
public:
    // `message` must be one sentence ending in a full stop (checked in debug builds).
    Error(ErrorCode code, std::string message);

    [[nodiscard]] ErrorCode code() const noexcept { return code_; }
    [[nodiscard]] const std::string& message() const noexcept { return message_; }
    // The refusal's reason code; empty when none was given.
    [[nodiscard]] std::string_view reasonCode() const noexcept { return reason_; }

    // Returns a copy whose message is "<context>: <message>" with the first letter lowered,
    // e.g. "Cannot import dataset 'x': the file ends early." for layered reporting.
    [[nodiscard]] Error withContext(const std::string& context) const;
    // Returns a copy that carries `reason`.
    [[nodiscard]] Error because(ReasonCode reason) const
    {
        Error copy = *this;
        copy.reason_ = reason.name();
        return copy;
    }
    // Returns a copy that carries `other`'s reason code (none when it has none).
    [[nodiscard]] Error withReasonOf(const Error& other) const
    {
        Error copy = *this;
        copy.reason_ = other.reason_;
        return copy;
    }

private:
    ErrorCode code_;
    std::string message_;
    std::string_view reason_;  // a ReasonCode's name: static storage
};

// True when `text` reads as one sentence for a user: non-empty, starts with a capital letter
// or a quote, ends with '.', and has no line break and no sentence break (". " + capital) inside.
[[nodiscard]] bool isOneSentence(const std::string& text) noexcept;

// Another library's message (SQLite, MPI, CUDA, NCCL, OpenSSL) made fit to sit inside one of our
// sentences, as in "The MPI all-reduce failed (<clause>); check …": line breaks and runs of
// spaces become one space, sentence breaks become semicolons, and the final full stop goes.
[[nodiscard]] std::string asClause(std::string_view foreignMessage);

template <typename T>
class [[nodiscard]] Result final {
public:
    Result(T value)
        : state_(std::in_place_index<0>, std::move(value))
    {
    }  // NOLINT: implicit
    Result(Error error)
        : state_(std::in_place_index<1>, std::move(error))
    {
    }  // NOLINT: implicit

    [[nodiscard]] bool ok() const noexcept { return state_.index() == 0; }
    explicit operator bool() const noexcept { return ok(); }

    [[nodiscard]] T& value() &
    {
        assert(ok());
        return std::get<0>(state_);
    }
    [[nodiscard]] const T& value() const&
    {
        assert(ok());
        return std::get<0>(state_);
    }
    [[nodiscard]] T&& value() &&
    {
        assert(ok());
        return std::get<0>(std::move(state_));
    }
    [[nodiscard]] const Error& error() const
    {
        assert(!ok());
        return std::get<1>(state_);
    }

    T* operator->() { return &value(); }
    const T* operator->() const { return &value(); }
    T& operator*() & { return value(); }
    const T& operator*() const& { return value(); }

private:
    std::variant<T, Error> state_;
};

template <>
class [[nodiscard]] Result<void> final {
public:
    Result() = default;
    Result(Error error)
        : error_(std::move(error))
        , ok_(false)
    {
    }  // NOLINT: implicit

    [[nodiscard]] bool ok() const noexcept { return ok_; }
    explicit operator bool() const noexcept { return ok_; }
    [[nodiscard]] const Error& error() const
    {
        assert(!ok_);
        return error_;
    }

private:
    Error error_{ErrorCode::Internal, "No error."};
    bool ok_ = true;
};

// The success value of Result<void>.
[[nodiscard]] inline Result<void> success()
{
    return {};
}

}  // namespace sealtrain

// Propagates an error from an expression returning Result<...>; evaluates to nothing.
#define SEALTRAIN_TRY(expr)                                                                        \
    do {                                                                                           \
        if (auto sealtrain_try_result_ = (expr); !sealtrain_try_result_.ok())                      \
            return sealtrain_try_result_.error();                                                  \
    } while (false)

// Moves the value of an expression returning Result<T> into `target`, or propagates its error.
#define SEALTRAIN_ASSIGN(target, expr)                                                             \
    do {                                                                                           \
        auto sealtrain_assign_result_ = (expr);                                                    \
        if (!sealtrain_assign_result_.ok())                                                        \
            return sealtrain_assign_result_.error();                                               \
        (target) = std::move(sealtrain_assign_result_).value();                                    \
    } while (false)
