// The newest signed audit head, checked where the window shows it (the overview): the signed
// note Audit.NewestHead returns, verified with the audit key Platform.GetSigningKeys publishes
// (audit/tree_head.h). A note that does not verify is said so, never shown as signed.
#pragma once

#include <QString>

#include <cstdint>
#include <string>

namespace sealtrain::gui {

struct HeadCheck {
    bool verified = false;
    QString text;  // what the overview shows: the head's size, time, root and key, or why not
};

// `note` as stored (empty: none signed yet), `auditKeyPem` the Ed25519 public key in PEM form.
[[nodiscard]] HeadCheck checkSignedHead(const std::string& note, const std::string& auditKeyPem);

}  // namespace sealtrain::gui
