// A model version's lineage for the Models screen (issue #30), read from its lineage document
// (docs/formats/registry.md, "Lineage document"): drawn as a graph, one stage a row from the top
// (dataset and base model → job → the checkpoint chain → the version → its promotions side by
// side; an import: the imported folder → the version → its promotions) and written as an indented
// text whose lines carry the full digests. Plain functions of the document, tested without a
// server.
#pragma once

#include "common/lineage_view.h"

#include <QString>

#include <string>

namespace sealtrain::gui {

// Chains longer than this show their first and last three checkpoints and a box for the rest.
inline constexpr std::size_t kLineageCheckpointsShown = 7;

// The graph of `document`; empty when it can not be read.
[[nodiscard]] Lineage modelLineageOf(const std::string& document);

// The lineage document drawn as an indented graph, one node a line.
[[nodiscard]] QString lineageGraph(const std::string& document);

}  // namespace sealtrain::gui
