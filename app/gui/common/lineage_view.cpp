// A lineage, drawn (lineage_view.h).
#include "lineage_view.h"

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
constexpr int kGapDown = 26;  // between rows when arrows run down, room for their heads

// An arrow from `from` to `to`. Down: from the bottom's middle into the top's, turning halfway
// between the rows. Across: into the left side; down a trunk near the left edge from a box of the
// same column above, else from the right side, turning halfway between the columns.
void drawArrow(QPainter& painter, const QRect& from, const QRect& to, bool sameColumn,
               LineageFlow flow)
{
    if (flow == LineageFlow::Down) {
        const QPointF start(from.center().x(), from.bottom());
        const QPointF end(to.center().x(), to.top());
        QPainterPath path(start);
        if (start.x() != end.x()) {
            const double turn = (start.y() + end.y()) / 2;
            path.lineTo(start.x(), turn);
            path.lineTo(end.x(), turn);
        }
        path.lineTo(end);
        painter.drawPath(path);
        painter.drawLine(end, end + QPointF(-4, -7));
        painter.drawLine(end, end + QPointF(4, -7));
        return;
    }
    const QPointF start = sameColumn ? QPointF(from.left() + 12, from.bottom())
                                     : QPointF(from.right(), from.center().y());
    const QPointF end(to.left(), to.center().y());
    QPainterPath path(start);
    if (sameColumn) {
        path.lineTo(start.x(), end.y());
    } else if (start.y() != end.y()) {
        const double turn = (start.x() + end.x()) / 2;
        path.lineTo(turn, start.y());
        path.lineTo(turn, end.y());
    }
    path.lineTo(end);
    painter.drawPath(path);
    painter.drawLine(end, end + QPointF(-7, -4));
    painter.drawLine(end, end + QPointF(-7, 4));
}

}  // namespace

QString Lineage::text() const
{
    std::multimap<int, const LineageEdge*> into;
    for (const LineageEdge& edge : edges)
        into.emplace(edge.to, &edge);
    QStringList lines;
    for (std::size_t index = 0; index < nodes.size(); ++index) {
        QString line = nodes[index].title + " (" + nodes[index].detail + ")";
        const auto [first, last] = into.equal_range(static_cast<int>(index));
        QStringList sources;
        for (auto edge = first; edge != last; ++edge)
            sources << edge->second->relation + " " + nodes[std::size_t(edge->second->from)].title;
        if (!sources.isEmpty())
            line += " " + sources.join(", ");
        lines << line;
    }
    return lines.join('\n');
}

LineageView::LineageView(QString empty, QWidget* parent)
    : QWidget(parent)
    , empty_(std::move(empty))
{
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
    // A model's stages, one a row, have the width to say more than a dataset's columns.
    const int width =
        metrics.horizontalAdvance(QString(lineage_.flow == LineageFlow::Down ? 44 : 34, 'x'));
    const int height = metrics.height() * 2 + 10;
    const int gapY = lineage_.flow == LineageFlow::Down ? kGapDown : kGapY;
    return {kMargin + node.column * (width + kGapX), kMargin + node.row * (height + gapY), width,
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
                         empty_);
        return;
    }
    painter.setPen(QPen(colours.color(QPalette::Mid), 1.5));
    painter.setBrush(Qt::NoBrush);
    for (const LineageEdge& edge : lineage_.edges) {
        const LineageNode& source = lineage_.nodes[std::size_t(edge.from)];
        const LineageNode& target = lineage_.nodes[std::size_t(edge.to)];
        drawArrow(painter, box(source), box(target), source.column == target.column, lineage_.flow);
    }
    for (const LineageNode& node : lineage_.nodes) {
        const QRect area = box(node);
        const bool version = node.main;
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
