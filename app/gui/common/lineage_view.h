// A lineage, drawn (issues #29 and #30): boxes placed on a grid of columns (left to right) and
// rows (top to bottom), each edge an arrow from what a box came from. The Datasets screen draws a
// dataset's versions and the jobs trained on them (datasets/dataset_lineage.h), the Models screen
// a version's signed lineage: dataset, job, checkpoints, version, promotions
// (models/model_lineage.h). Built from plain rows, so it is tested without a server; the view
// paints it and gives a screen reader the same facts as text (its accessible description).
#pragma once

#include <QString>
#include <QWidget>

#include <vector>

namespace sealtrain::gui {

struct LineageNode {
    QString title;   // "notes v2", "job 7 fortunes-small"
    QString detail;  // "sha256:c048b0…, 1,204 records", "succeeded, by bob"
    int column = 0;  // left to right
    int row = 0;     // top to bottom
    bool selected = false;
    bool main = false;  // drawn bold on the page's base colour (a version)
};

struct LineageEdge {
    int from = 0;  // indexes into nodes
    int to = 0;
    QString relation;  // how `to` came from `from`, as text says it: "after", "trained on"
};

// How arrows run: into a box's left side (a dataset's versions across, its jobs hanging under
// each), or from a box's bottom into the top of the box below (a model's lineage, stage by stage).
enum class LineageFlow { Across, Down };

struct Lineage {
    LineageFlow flow = LineageFlow::Across;
    std::vector<LineageNode> nodes;
    std::vector<LineageEdge> edges;
    // One line per node, with what it came from ("TITLE (DETAIL) RELATION TITLE, …"), for a
    // screen reader and for the tests.
    [[nodiscard]] QString text() const;
};

class LineageView final : public QWidget {
    Q_OBJECT

public:
    // `empty`: what the view says while it has nothing to draw.
    LineageView(QString empty, QWidget* parent = nullptr);

    void setLineage(Lineage lineage);
    [[nodiscard]] const Lineage& lineage() const noexcept { return lineage_; }
    [[nodiscard]] QSize sizeHint() const override;
    // Where the selected node is drawn (empty: none), to scroll it into view.
    [[nodiscard]] QRect selectedBox() const;

protected:
    void paintEvent(QPaintEvent* event) override;

private:
    [[nodiscard]] QRect box(const LineageNode& node) const;

    QString empty_;
    Lineage lineage_;
};

}  // namespace sealtrain::gui
