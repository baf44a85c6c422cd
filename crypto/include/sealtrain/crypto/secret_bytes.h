// SecretBytes: the one type that holds key material (docs/development.md; the idea is KeePassXC's).
//
// Its bytes live in libsodium's guarded allocation: locked out of swap, surrounded by guard
// pages, excluded from core dumps where the kernel allows, and zeroed when freed. It can be
// moved but not copied by accident (copy() is explicit), converts to no string, and formats
// for logs as "SecretBytes(<n> bytes)" only.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/base/wipe.h"

#include <fmt/format.h>

#include <cstddef>
#include <cstdint>
#include <span>

namespace sealtrain::crypto {

class SecretBytes final {
public:
    SecretBytes() noexcept = default;
    ~SecretBytes();

    // Allocates `size` zeroed bytes; fails only when locked memory runs out.
    [[nodiscard]] static Result<SecretBytes> allocate(std::size_t size);
    // Copies `bytes` in; the caller is responsible for wiping its own copy.
    [[nodiscard]] static Result<SecretBytes> fromBytes(std::span<const std::uint8_t> bytes);
    // `size` bytes from the operating system's CSPRNG.
    [[nodiscard]] static Result<SecretBytes> random(std::size_t size);

    SecretBytes(SecretBytes&& other) noexcept;
    SecretBytes& operator=(SecretBytes&& other) noexcept;
    SecretBytes(const SecretBytes&) = delete;
    SecretBytes& operator=(const SecretBytes&) = delete;

    [[nodiscard]] Result<SecretBytes> copy() const;

    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    [[nodiscard]] std::span<const std::uint8_t> bytes() const noexcept { return {data_, size_}; }
    [[nodiscard]] std::span<std::uint8_t> mutableBytes() noexcept { return {data_, size_}; }

    // Constant-time comparison.
    [[nodiscard]] bool equals(const SecretBytes& other) const noexcept;

    // Zeroes and frees now rather than at destruction.
    void wipe() noexcept;

private:
    SecretBytes(std::uint8_t* data, std::size_t size) noexcept
        : data_(data)
        , size_(size)
    {
    }

    std::uint8_t* data_ = nullptr;
    std::size_t size_ = 0;
};

// Wipes a buffer that held secret bytes outside SecretBytes (e.g. a read() buffer).
using ::sealtrain::wipeMemory;

}  // namespace sealtrain::crypto

// Logging a SecretBytes shows its length, never its bytes.
template <>
struct fmt::formatter<sealtrain::crypto::SecretBytes> : fmt::formatter<std::string_view> {
    template <typename FormatContext>
    auto format(const sealtrain::crypto::SecretBytes& secret, FormatContext& ctx) const
    {
        return fmt::format_to(ctx.out(), "SecretBytes({} bytes)", secret.size());
    }
};
