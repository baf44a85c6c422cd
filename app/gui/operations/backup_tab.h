// Backups, for operators (platform.backup; issue #51): the control plane's encrypted, signed
// archive of itself taken while it serves and saved where the operator chooses (a native file
// dialog; a progress bar while it arrives), where the last one this profile took is, how old it
// is and whether it is still there (the profile's last-backup.json, shared with `sealtrainctl
// backup`), and an archive verified offline against the platform's audit key
// (`sealtrain-control verify-backup`, as `sealtrainctl backup verify` does).
#pragma once

#include "sealtrain/api/backup_record.h"

#include <QWidget>

#include <optional>

class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;

namespace sealtrain::gui {

class Session;

class BackupTab final : public QWidget {
    Q_OBJECT

public:
    explicit BackupTab(Session& session, QWidget* parent = nullptr);

    [[nodiscard]] static bool allowedFor(const Session& session);
    // Shows the last backup again.
    void reload();
    void clear();
    [[nodiscard]] bool busy() const noexcept { return busy_; }
    // What the "last backup" line says of `record` at `nowUnix`, and whether it warns (gone, or
    // older than a week).
    struct LastText {
        QString text;
        bool warns = false;
    };
    [[nodiscard]] static LastText lastText(const std::optional<api::BackupRecord>& record,
                                           std::int64_t nowUnix);

private:
    void take();
    void verify();
    void setBusy(bool busy);

    Session& session_;
    QLineEdit* path_;
    QPushButton* take_;
    QProgressBar* progress_;
    QLabel* last_;
    QLineEdit* verifyPath_;
    QPushButton* verify_;
    QLabel* status_;
    bool busy_ = false;
};

}  // namespace sealtrain::gui
