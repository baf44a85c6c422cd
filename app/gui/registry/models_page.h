// Models (issue #30; docs/registry.md, docs/gui.md "Models"): the registry's models of the
// caller's projects and, for the one chosen, a tab each (model_tabs.h): its versions with their
// digests and aliases, its promotions and its exports, each decided here by a second person, and
// a version's lineage drawn from its signed lineage document: dataset → job → the checkpoint
// chain → the version → its promotions. Shown to whoever may register or approve models.
#pragma once

#include "model_tabs.h"

#include "sealtrain/api/client.h"

#include <QWidget>

#include <optional>
#include <string>

class QLabel;
class QLineEdit;
class QTableView;
class QPushButton;
class QTabWidget;

namespace sealtrain::gui {

class ModelTableModel;
class Session;

class ModelsPage final : public QWidget {
    Q_OBJECT

public:
    explicit ModelsPage(Session& session, QWidget* parent = nullptr);

    void reload();
    // Offers "Import a base model…" to those who may register models (reload() and the window
    // at sign-in call it).
    void permit();
    // Opens the base-model import (import_model_dialog.h); what it returns is open.
    class ImportModelDialog* openImport();
    // Forgets every model shown (the user signed out or the window locked).
    void clear();
    // Chooses model `name` in the table (which shows it); false when it is not listed.
    bool choose(const std::string& name);

    [[nodiscard]] ModelTableModel& model() const noexcept { return *model_; }
    [[nodiscard]] const std::optional<api::ModelView>& shown() const noexcept { return shown_; }

signals:
    // The chosen model has arrived and is shown.
    void modelShown();
    // The chosen version's lineage document has arrived and is drawn.
    void lineageShown();
    // A request or decision went through (the model is then shown again), or an export arrived.
    void actionDone(const QString& what);

private:
    void showChosen();
    void show(api::ModelView model);
    void updateButtons();
    void showLineage();
    void act(const QString& done, const ModelCalls::Call& call);
    void showError(const QString& message);

    Session& session_;
    ModelTableModel* model_;
    QTableView* table_;
    QLabel* title_;
    QLabel* error_;
    QTabWidget* tabs_;
    QLineEdit* reason_;
    ModelCalls calls_;
    VersionsTab* versions_;
    PromotionsTab* promotions_;
    ExportsTab* exports_;
    LineageTab* lineage_;
    QPushButton* import_;
    std::optional<api::ModelView> shown_;
    int asked_ = 0;  // which choice the answers in flight belong to
};

}  // namespace sealtrain::gui
