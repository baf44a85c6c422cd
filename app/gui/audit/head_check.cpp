// The newest signed audit head, checked (head_check.h).
#include "head_check.h"

#include "sealtrain/audit/tree_head.h"
#include "sealtrain/base/encoding.h"
#include "sealtrain/crypto/signing.h"

#include <QCoreApplication>

namespace sealtrain::gui {

HeadCheck checkSignedHead(const std::string& note, const std::string& auditKeyPem)
{
    if (note.empty())
        return {false, QCoreApplication::translate("HeadCheck", "No head has been signed yet.")};
    auto key = crypto::PublicKey::fromPem(auditKeyPem);
    if (!key)
        return {false, QCoreApplication::translate(
                           "HeadCheck",
                           "The control plane published no usable audit key, so the newest head "
                           "can not be checked.")};
    // The note names its log on its first line; the signature binds that name and the key.
    const std::string origin = note.substr(0, note.find('\n'));
    auto head = audit::verifyTreeHead(note, audit::NoteVerifier{origin, *key});
    if (!head)
        return {false, QCoreApplication::translate(
                           "HeadCheck", "The newest head does NOT verify with the audit key: %1")
                           .arg(QString::fromStdString(head.error().message()))};
    return {true, QCoreApplication::translate(
                      "HeadCheck", "%1 entries, signed %2 with the audit key %3; root %4")
                      .arg(head->size)
                      .arg(QString::fromStdString(audit::formatUtcSeconds(head->timeSeconds)),
                           QString::fromStdString(key->keyId()),
                           QString::fromStdString(toHex(head->root)))};
}

}  // namespace sealtrain::gui
