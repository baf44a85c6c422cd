// What the client library returns of the model registry (registry.proto): plain values, no gRPC
// type, for sealtrainctl and the GUI.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace sealtrain::api {

struct ModelVersionView {
    std::string name;
    std::int64_t version = 0;
    std::string project;
    std::string description;
    std::int64_t job = 0;
    std::int64_t step = 0;
    std::string digest;  // "sha256:" + hex, what a promotion's approval names
    std::string sealedSha256;
    std::string worker;
    std::string datasetId;
    std::string registeredBy;
    std::int64_t registeredUnix = 0;
    std::vector<std::string> aliases;
    std::string statement;  // the registration's DSSE envelope (JSON)
    std::string source;     // "job", or "import" (a base model: no job, step or worker)
    std::string tokenizer;  // an import's, canonical JSON
    std::string shape;      // an import's, canonical JSON
    std::string base;       // NAME@VERSION its job started from; empty: from scratch
};

// A Hugging Face GPT-2 folder to import as a base model (ControlClient::importModel).
struct ModelImportRequest {
    std::string name;
    std::string project;
    std::string description;
    std::string folder;  // holds config.json, model.safetensors, vocab.json, merges.txt
};

struct PromotionView {
    std::int64_t id = 0;
    std::string model;
    std::int64_t version = 0;
    std::string alias;
    std::string digest;
    std::string reason;
    std::string requestedBy;
    std::int64_t requestedUnix = 0;
    std::string state;  // pending, approved, rejected
    std::string decidedBy;
    std::int64_t decidedUnix = 0;
    std::string decisionReason;
    std::int64_t previousVersion = 0;
    std::string statement;  // the approval's DSSE envelope; empty unless approved
};

struct ModelExportView {
    std::int64_t id = 0;
    std::string model;
    std::int64_t version = 0;
    std::string digest;
    std::string reason;
    std::string requestedBy;
    std::int64_t requestedUnix = 0;
    std::string state;  // pending, approved, rejected
    std::string decidedBy;
    std::int64_t decidedUnix = 0;
    std::string decisionReason;
    std::int64_t downloads = 0;
    std::string folderDigest;
};

struct ModelView {
    std::string name;
    std::string project;
    std::vector<ModelVersionView> versions;  // oldest first
    std::vector<PromotionView> promotions;   // oldest first
    std::vector<ModelExportView> exports;    // oldest first
};

struct ModelSummaryView {
    std::string name;
    std::string project;
    std::int64_t versions = 0;
    std::int64_t pendingPromotions = 0;
    std::vector<std::pair<std::string, std::int64_t>> aliases;  // alias, version
};

}  // namespace sealtrain::api
