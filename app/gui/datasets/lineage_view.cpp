// A dataset's lineage, drawn (lineage_view.h).
#include "lineage_view.h"

#include <QLocale>
#include <QPainter>
#include <QPainterPath>

#include <algorithm>
#include <cmath>
#include <map>

namespace sealtrain::gui {
namespace {

constexpr int kMargin = 8;
constexpr int kGapX = 36;
constexpr int kGapY = 14;

QString shortId(const std::string& id)
{
    return QString::fromStdString(id.size() > 15 ? id.substr(0, 15) + "…" : id);
}

}  // namespace

QString Lineage::text() const
{
    std::map<int, int> parentOf;
    for (const LineageEdge& edge : edges)
        parentOf[edge.to] = edge.from;
    QStringList lines;
    for (std::size_t index = 0; index < nodes.size(); ++index) {
        QString line = nodes[index].title + " (" + nodes[index].detail + ")";
        const auto parent = parentOf.find(static_cast<int>(index));
        if (parent != parentOf.end())
            line += (nodes[index].row == 0 ? " after " : " trained on ")
                    + nodes[std::size_t(parent->second)].title;
        lines << line;
    }
    return lines.join('\n');
}

Lineage lineageOf(const std::vector<api::DatasetSummary>& datasets,
                  const std::vector<api::JobSummary>& jobs, const std::string& selected)
{
    Lineage lineage;
    const auto chosen =
        std::find_if(datasets.begin(), datasets.end(),
                     [&](const api::DatasetSummary& d) { return d.id == selected; });
    if (chosen == datasets.end())
        return lineage;
    std::vector<const api::DatasetSummary*> versions;
    for (const api::DatasetSummary& dataset : datasets)
        if (dataset.name == chosen->name)
            versions.push_back(&dataset);
    std::sort(versions.begin(), versions.end(),
              [](const auto* a, const auto* b) { return a->version < b->version; });
    const QLocale locale;
    int previous = -1;  // the previous version's node
    for (std::size_t column = 0; column < versions.size(); ++column) {
        const api::DatasetSummary& version = *versions[column];
        const int versionNode = static_cast<int>(lineage.nodes.size());
        lineage.nodes.push_back(
            {QStringLiteral("%1 v%2")
                 .arg(QString::fromStdString(version.name))
                 .arg(version.version),
             QStringLiteral("%1, %2 records, %3")
                 .arg(shortId(version.id), locale.toString(qulonglong(version.records)),
                      QString::fromStdString(version.classification)),
             static_cast<int>(column), 0, version.id == selected});
        if (previous >= 0)
            lineage.edges.push_back({previous, versionNode});
        previous = versionNode;
        int row = 1;
        for (const api::JobSummary& job : jobs) {
            if (job.datasetId != version.id)
                continue;
            lineage.edges.push_back({versionNode, static_cast<int>(lineage.nodes.size())});
            lineage.nodes.push_back(
                {QStringLiteral("job %1 %2").arg(job.id).arg(QString::fromStdString(job.name)),
                 QStringLiteral("%1, by %2")
                     .arg(QString::fromStdString(job.state), QString::fromStdString(job.submitter)),
                 static_cast<int>(column), row++, false});
        }
    }
    return lineage;
}

LineageView::LineageView(QWidget* parent)
    : QWidget(parent)
{
    setObjectName("datasetLineage");
    setAccessibleName(tr("The dataset's versions and the jobs trained on them"));
    setFocusPolicy(Qt::TabFocus);
}

void LineageView::setLineage(Lineage lineage)
{
    lineage_ = std::move(lineage);
    setAccessibleDescription(lineage_.text());
    setToolTip(lineage_.text());
    // Its whole drawing, so that the scroll area around it scrolls rather than squeezes it.
    setMinimumSize(sizeHint());
    updateGeometry();
    update();
}

QRect LineageView::box(const LineageNode& node) const
{
    const QFontMetrics metrics = fontMetrics();
    const int width = metrics.horizontalAdvance(QString(34, 'x'));
    const int height = metrics.height() * 2 + 10;
    return {kMargin + node.column * (width + kGapX), kMargin + node.row * (height + kGapY), width,
            height};
}

QRect LineageView::selectedBox() const
{
    for (const LineageNode& node : lineage_.nodes)
        if (node.selected)
            return box(node);
    return {};
}

QSize LineageView::sizeHint() const
{
    QRect all;
    for (const LineageNode& node : lineage_.nodes)
        all = all.united(box(node));
    return all.isNull() ? QSize(200, 40) : QSize(all.right() + kMargin, all.bottom() + kMargin);
}

void LineageView::paintEvent(QPaintEvent* /*event*/)
{
    QPainter painter(this);
    painter.setRenderHint(QPainter::Antialiasing);
    const QPalette colours = palette();
    if (lineage_.nodes.empty()) {
        painter.setPen(colours.color(QPalette::PlaceholderText));
        painter.drawText(rect().adjusted(kMargin, kMargin, 0, 0), Qt::AlignLeft | Qt::AlignTop,
                         tr("Choose a dataset to see its versions and the jobs trained on them."));
        return;
    }
    // Arrows: version to version along the top, version down to its jobs.
    painter.setPen(QPen(colours.color(QPalette::Mid), 1.5));
    for (const LineageEdge& edge : lineage_.edges) {
        const QRect from = box(lineage_.nodes[std::size_t(edge.from)]);
        const QRect to = box(lineage_.nodes[std::size_t(edge.to)]);
        const bool down = lineage_.nodes[std::size_t(edge.to)].row > 0;
        const QPointF start = down ? QPointF(from.left() + 12, from.bottom())
                                   : QPointF(from.right(), from.center().y());
        const QPointF end(to.left(), to.center().y());
        QPainterPath path(start);
        if (down)
            path.lineTo(start.x(), end.y());
        path.lineTo(end);
        painter.drawPath(path);
        const QPointF tip = end;
        painter.drawLine(tip, tip + QPointF(-7, -4));
        painter.drawLine(tip, tip + QPointF(-7, 4));
    }
    for (const LineageNode& node : lineage_.nodes) {
        const QRect area = box(node);
        const bool version = node.row == 0;
        painter.setPen(
            QPen(node.selected ? colours.color(QPalette::Highlight) : colours.color(QPalette::Mid),
                 node.selected ? 2.5 : 1.0));
        painter.setBrush(version ? colours.color(QPalette::Base) : colours.color(QPalette::Window));
        painter.drawRoundedRect(area, 5, 5);
        painter.setPen(colours.color(QPalette::Text));
        QFont bold = font();
        bold.setBold(version);
        painter.setFont(bold);
        const QRect inner = area.adjusted(6, 4, -6, -4);
        painter.drawText(inner, Qt::AlignLeft | Qt::AlignTop,
                         fontMetrics().elidedText(node.title, Qt::ElideRight, inner.width()));
        painter.setFont(font());
        painter.drawText(inner, Qt::AlignLeft | Qt::AlignBottom,
                         fontMetrics().elidedText(node.detail, Qt::ElideRight, inner.width()));
    }
}

}  // namespace sealtrain::gui
