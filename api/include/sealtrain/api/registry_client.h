// The client library's handle on the Registry service, ControlClient::registry() (docs/api.md). The
// model registry: versions, promotions, lineage and exports (registry.proto; docs/registry.md).
// Every call returns a Result whose error is the server's one sentence, or the client's own for a
// transport failure; no gRPC type crosses this header.
#pragma once

#include "sealtrain/api/client_call.h"
#include "sealtrain/api/registry_views.h"
#include "sealtrain/base/result.h"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace sealtrain::api {

class RegistryClient final : public client_internal::Handle {
public:
    using Handle::Handle;

    // The model registry (registry.proto; docs/registry.md): register a job's recorded
    // checkpoint (`step` 0: its newest) as a model's next version; the models one may read; one
    // model whole; ask for, approve (naming the version's digest) or reject a promotion; a
    // version's lineage document (NAME, NAME@VERSION or NAME@ALIAS).
    [[nodiscard]] Result<ModelVersionView> registerModel(const std::string& name,
                                                         const std::string& description,
                                                         std::int64_t job, std::int64_t step);
    // A Hugging Face GPT-2 folder as the next version of a model, a base model to fine-tune
    // from (model.register in the project); `progress` hears of the bytes sent.
    [[nodiscard]] Result<ModelVersionView> importModel(const ModelImportRequest& request,
                                                       const UploadProgress& progress = {});
    [[nodiscard]] Result<std::vector<ModelSummaryView>> listModels();
    [[nodiscard]] Result<ModelView> showModel(const std::string& name);
    [[nodiscard]] Result<PromotionView> requestPromotion(const std::string& name,
                                                         std::int64_t version,
                                                         const std::string& alias,
                                                         const std::string& reason);
    [[nodiscard]] Result<PromotionView> approvePromotion(std::int64_t id,
                                                         const std::string& digest);
    [[nodiscard]] Result<PromotionView> rejectPromotion(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<std::string> modelLineage(const std::string& reference);
    // Exports: ask for one of NAME@VERSION; approve it (the version's digest) or reject it; and,
    // once approved, receive the folder into `folder` (made by the call; it must not exist): its
    // files are written into a temporary sibling that takes the name only when all arrived.
    // Returns the folder's digest.
    [[nodiscard]] Result<ModelExportView> requestExport(const std::string& reference,
                                                        const std::string& reason);
    [[nodiscard]] Result<ModelExportView> approveExport(std::int64_t id, const std::string& digest);
    [[nodiscard]] Result<ModelExportView> rejectExport(std::int64_t id, const std::string& reason);
    [[nodiscard]] Result<std::string> downloadExport(std::int64_t id,
                                                     const std::filesystem::path& folder);
};

}  // namespace sealtrain::api
