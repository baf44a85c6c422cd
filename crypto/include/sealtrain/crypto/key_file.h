// Key files: a KEK (or a headless daemon's master key) in a small text file an operator can
// create, back up and hand to a process, readable by its owner only. Format:
// docs/formats/keyfile.md.
#pragma once

#include "sealtrain/base/result.h"
#include "sealtrain/crypto/kek.h"

#include <filesystem>
#include <string>

namespace sealtrain::crypto {

// Reads a key file. Refuses files that other users can read or write, malformed files and keys
// that are not 32 bytes, each with one sentence that says what to do.
[[nodiscard]] Result<Kek> readKekFile(const std::filesystem::path& path);

// Writes `kek` to a new file with mode 0600; never overwrites an existing file.
[[nodiscard]] Result<void> writeKekFile(const std::filesystem::path& path, const Kek& kek);

// A fresh random 32-byte KEK with this identity.
[[nodiscard]] Result<Kek> generateKek(const std::string& id, std::uint32_t version);

// Resolves only `kek` (the one KEK a key file holds): NotFound naming both the KEK an object is
// sealed under and the key file's when they differ. `kek` must outlive the resolver.
[[nodiscard]] KekResolver keyFileResolver(const Kek& kek);

// Whether `id` is a valid KEK id: 1 to 64 characters of [a-z0-9._-].
[[nodiscard]] bool isValidKekId(const std::string& id);

}  // namespace sealtrain::crypto
