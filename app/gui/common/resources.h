// The application's built-in resources (resources/sealtrain.qrc: the icon, the job-spec schema).
// They are compiled into the static GUI library, whose resource initializer the linker keeps
// only when something calls it: main() and every reader call ensureResources() first.
#pragma once

namespace sealtrain::gui {

void ensureResources();

}  // namespace sealtrain::gui
