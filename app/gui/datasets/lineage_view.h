// A dataset's lineage, drawn (issue #29): its versions left to right, each an arrow from the one
// it was imported after (the signed manifest's parent), and under each version the jobs that
// trained on it (for those who may see jobs), with their state. Built from plain rows
// (lineageOf), so it is tested without a server; the view paints it, and gives a screen reader
// the same facts as text (its accessible description).
#pragma once

#include "sealtrain/api/client.h"

#include <QString>
#include <QWidget>

#include <string>
#include <vector>

namespace sealtrain::gui {

struct LineageNode {
    QString title;   // "notes v2", "job 7 fortunes-small"
    QString detail;  // "sha256:c048b0…, 1,204 records", "succeeded, by bob"
    int column = 0;  // the version's place, left to right
    int row = 0;     // 0: the versions; 1…: the jobs under one
    bool selected = false;
};

struct LineageEdge {
    int from = 0;  // indexes into nodes
    int to = 0;
};

struct Lineage {
    std::vector<LineageNode> nodes;
    std::vector<LineageEdge> edges;
    // One line per node and what it came from, for a screen reader and for the tests.
    [[nodiscard]] QString text() const;
};

// The versions of `selected`'s dataset name among `datasets`, each linked to the next, and the
// jobs among `jobs` whose dataset is one of them, under it.
[[nodiscard]] Lineage lineageOf(const std::vector<api::DatasetSummary>& datasets,
                                const std::vector<api::JobSummary>& jobs,
                                const std::string& selected);

class LineageView final : public QWidget {
    Q_OBJECT

public:
    explicit LineageView(QWidget* parent = nullptr);

    void setLineage(Lineage lineage);
    [[nodiscard]] const Lineage& lineage() const noexcept { return lineage_; }
    [[nodiscard]] QSize sizeHint() const override;
    // Where the selected version is drawn (empty: none), to scroll it into view.
    [[nodiscard]] QRect selectedBox() const;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    [[nodiscard]] QRect box(const LineageNode& node) const;

    Lineage lineage_;
};

}  // namespace sealtrain::gui
