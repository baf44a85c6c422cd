// Operations (issue #51, item 2): the operators' tasks that only the CLI had, one tab each, each
// shown only when WhoAmI says the caller may use it.
//   Backup (backup_tab.h; platform.backup): take one, verify it, where the last one is, its age
//   Compliance (compliance_tab.h; audit.read and audit.export): the report for a period
//   Audit trail (trail_tab.h; audit.read): forwarding to the SIEM and the witnesses
// The server decides every call; a refusal is its sentence on the tab.
#pragma once

#include <QWidget>

class QTabWidget;

namespace sealtrain::gui {

class BackupTab;
class ComplianceTab;
class Session;
class TrailTab;

class OperationsPage final : public QWidget {
    Q_OBJECT

public:
    explicit OperationsPage(Session& session, QWidget* parent = nullptr);

    // Whether the caller may see this screen at all.
    [[nodiscard]] static bool allowedFor(const Session& session);
    // Shows the tabs the signed-in user's permissions allow (reload() and the window at sign-in
    // call it).
    void permit();
    // Shows the tabs the caller may use and reads what they show again.
    void reload();
    // Forgets what was shown (signing out).
    void clear();

    [[nodiscard]] BackupTab& backup() const noexcept { return *backup_; }
    [[nodiscard]] ComplianceTab& compliance() const noexcept { return *compliance_; }
    [[nodiscard]] TrailTab& trail() const noexcept { return *trail_; }

private:
    Session& session_;
    QTabWidget* tabs_;
    BackupTab* backup_;
    ComplianceTab* compliance_;
    TrailTab* trail_;
};

}  // namespace sealtrain::gui
