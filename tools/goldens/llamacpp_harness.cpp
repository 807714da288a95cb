// llamacpp_harness: what llama-server (llama.cpp b9553) does to a gpt-oss answer, without a model.
//
// Linked against llama.cpp's own `llama-common` (built by tools/goldens/llamacpp_build.sh from the
// tree vendored at Telosnex/fllama@1d28604d src/llama.cpp, upstream tag b9553 9e3b928fd); the
// llama.cpp source is not part of mockoss. Each step below is the server's, cited by
// path:line in that tree (tools/server/..., common/...):
//
//  * the request -> common_chat_templates_inputs as oaicompat_chat_params_parse does
//    (tools/server/server-common.cpp:1034-1111): messages, tools, tool_choice, parallel_tool_calls
//    (template caps), add_generation_prompt=true, reasoning_format (request field, else the server
//    default COMMON_REASONING_FORMAT_DEEPSEEK, common/common.h:611), enable_thinking (template
//    support, server-context.cpp:1238), chat_template_kwargs.enable_thinking;
//  * common_chat_templates_apply with the gpt-oss GGUF template (models/templates/
//    openai-gpt-oss-120b.jinja, passed as the template override; the loader's patches apply,
//    common/chat.cpp:694-712), which routes to common_chat_params_init_gpt_oss (chat.cpp:1059);
//  * the parser params as params_from_json_cmpl builds them (server-task.cpp:415-440): format,
//    reasoning_format, reasoning_in_content (stream && deepseek-legacy), generation_prompt,
//    parse_tool_calls (tools && tool_choice != none), the serialised PEG parser;
//  * task_result_state::update_chat_msg (server-task.cpp:158-231, filter_tool_calls=false):
//    common_chat_parse of the accumulated text (generation prompt prepended, chat.cpp:2494),
//    set_tool_call_ids with the server's 32-character random ids, compute_diffs;
//  * non-streamed: one final update (is_partial=false) of the whole text; the reply's choice is
//    to_json_oaicompat_chat's (server-task.cpp:826-846): finish_reason "length" unless the stop was
//    EOS/word, then "tool_calls" or "stop"; message = common_chat_msg::to_json_oaicompat.
//  * streamed: the begin result (server-context.cpp:2916, update with "" partial, nothing sent),
//    one partial update per text the slot sends (process_token, server-context.cpp:1555-1600; the
//    driver computes those texts), each turned into deltas as
//    server_task_result_cmpl_partial::to_json_oaicompat_chat does (server-task.cpp:1509-1561; a
//    first {"role":"assistant","content":null} delta when n_decoded == 1), then the final update
//    ("" with is_partial=false) and its deltas plus the finish chunk (server-task.cpp:874-905).
//    Deltas are server_chat_msg_diff_to_json_oaicompat (tools/server/server-chat.cpp:550-577),
//    restated here because the server sources are not linked.
//
// Input (stdin): one JSON object a line:
//   {"id": str, "request": {chat completion body}, "text": str (the whole generated text),
//    "chunks": [[text, n_decoded], ...] (the texts the slot sends, in order), "eos": bool}
// Output (stdout): one JSON object a line:
//   {"id", "format", "generation_prompt", "parse_tool_calls", "reasoning_format",
//    "reply": {"finish_reason", "message"} | {"error"},  or "request_error": {code, message, type}
//    when applying the template throws,
//    "stream": [{"delta": {...}, "finish_reason": null|str}, ...] (+ "stream_error" if a parse threw)}
// An exception from a parse is what the server turns into an error reply; it is recorded as text.

#include "chat.h"
#include "common.h"

#include <nlohmann/json.hpp>

#include <fstream>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using json = nlohmann::ordered_json;

// tools/server/server-common.cpp:64-85 (random_string, gen_tool_call_id): 32 characters of this
// alphabet; seeded here instead of std::random_device (the goldens normalise ids to their shape)
static std::string random_string() {
    static const std::string str("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz");
    static std::mt19937 generator(12345);
    std::string result(32, ' ');
    for (int i = 0; i < 32; ++i) {
        result[i] = str[generator() % str.size()];
    }
    return result;
}

// tools/server/server-chat.cpp:550-577
static json diff_to_json(const common_chat_msg_diff & diff) {
    json delta = json::object();
    if (!diff.reasoning_content_delta.empty()) {
        delta["reasoning_content"] = diff.reasoning_content_delta;
    }
    if (!diff.content_delta.empty()) {
        delta["content"] = diff.content_delta;
    }
    if (diff.tool_call_index != std::string::npos) {
        json tool_call;
        tool_call["index"] = diff.tool_call_index;
        if (!diff.tool_call_delta.id.empty()) {
            tool_call["id"]   = diff.tool_call_delta.id;
            tool_call["type"] = "function";
        }
        if (!diff.tool_call_delta.name.empty() || !diff.tool_call_delta.arguments.empty()) {
            json function = json::object();
            if (!diff.tool_call_delta.name.empty()) {
                function["name"] = diff.tool_call_delta.name;
            }
            if (!diff.tool_call_delta.arguments.empty()) {
                function["arguments"] = diff.tool_call_delta.arguments;
            }
            tool_call["function"] = function;
        }
        delta["tool_calls"] = json::array({ tool_call });
    }
    return delta;
}

// tools/server/server-task.cpp:158-231 with filter_tool_calls = false
struct result_state {
    common_chat_parser_params params;
    std::string               generated_text;
    common_chat_msg           chat_msg;
    std::vector<std::string>  ids;

    std::vector<common_chat_msg_diff> update(const std::string & text_added, bool is_partial) {
        generated_text += text_added;
        auto prev    = chat_msg;
        auto new_msg = common_chat_parse(generated_text, is_partial, params);
        std::vector<common_chat_msg_diff> diffs;
        if (!new_msg.empty()) {
            new_msg.set_tool_call_ids(ids, random_string);
            chat_msg = new_msg;
            diffs    = common_chat_msg_diff::compute_diffs(prev, chat_msg);
        }
        return diffs;
    }
};

static std::string finish_reason(bool eos, const common_chat_msg & msg) {
    if (!eos) {
        return "length";
    }
    return msg.tool_calls.empty() ? "stop" : "tool_calls";
}

static json run_one(const common_chat_templates * tmpls, const json & in) {
    const json & body = in.at("request");
    json out = { { "id", in.at("id") } };

    // tools/server/server-common.cpp:1034-1089 (oaicompat_chat_params_parse)
    auto caps = common_chat_templates_get_caps(tmpls);
    common_chat_templates_inputs inputs;
    inputs.messages    = common_chat_msgs_parse_oaicompat(body.at("messages"));
    inputs.tools       = common_chat_tools_parse_oaicompat(body.value("tools", json::array()));
    inputs.tool_choice = common_chat_tool_choice_parse_oaicompat(body.value("tool_choice", std::string("auto")));
    inputs.use_jinja   = true;
    inputs.parallel_tool_calls   = body.value("parallel_tool_calls", caps["supports_parallel_tool_calls"]);
    inputs.add_generation_prompt = body.value("add_generation_prompt", true);
    common_reasoning_format reasoning_format = COMMON_REASONING_FORMAT_DEEPSEEK;  // common/common.h:611
    if (body.contains("reasoning_format")) {
        reasoning_format = common_reasoning_format_from_name(body.at("reasoning_format").get<std::string>());
    }
    inputs.reasoning_format = reasoning_format;
    inputs.enable_thinking  = common_chat_templates_support_enable_thinking(tmpls);  // server-context.cpp:1238
    const json kwargs = body.value("chat_template_kwargs", json::object());
    for (const auto & item : kwargs.items()) {
        inputs.chat_template_kwargs[item.key()] = item.value().dump();
    }
    auto kw = inputs.chat_template_kwargs.find("enable_thinking");
    if (kw != inputs.chat_template_kwargs.end()) {
        inputs.enable_thinking = kw->second == "true";
    }
    // An exception here escapes the handler: ex_wrapper (tools/server/server.cpp:40-66) answers
    // 400 invalid_request_error for std::invalid_argument, else 500 server_error.
    common_chat_params chat_params;
    try {
        chat_params = common_chat_templates_apply(tmpls, inputs);
    } catch (const std::invalid_argument & e) {
        out["request_error"] = { { "code", 400 }, { "message", e.what() }, { "type", "invalid_request_error" } };
        return out;
    } catch (const std::exception & e) {
        out["request_error"] = { { "code", 500 }, { "message", e.what() }, { "type", "server_error" } };
        return out;
    }

    // tools/server/server-task.cpp:415-440 (params_from_json_cmpl)
    const bool stream = body.value("stream", false);
    common_chat_parser_params pp(chat_params);
    pp.reasoning_format     = reasoning_format;
    pp.reasoning_in_content = stream && reasoning_format == COMMON_REASONING_FORMAT_DEEPSEEK_LEGACY;
    pp.parse_tool_calls     = !inputs.tools.empty() && inputs.tool_choice != COMMON_CHAT_TOOL_CHOICE_NONE;
    if (!chat_params.parser.empty()) {
        pp.parser.load(chat_params.parser);
    }
    out["format"]            = common_chat_format_name(chat_params.format);
    out["generation_prompt"] = chat_params.generation_prompt;
    out["parse_tool_calls"]  = pp.parse_tool_calls;
    out["reasoning_format"]  = common_reasoning_format_name(reasoning_format);
    out["grammar_lazy"]      = chat_params.grammar_lazy;
    out["has_grammar"]       = !chat_params.grammar.empty();

    const bool eos = in.value("eos", true);

    if (!stream) {
        result_state st{ pp, "", {}, {} };
        try {
            st.update(in.at("text").get<std::string>(), false);
            out["reply"] = { { "finish_reason", finish_reason(eos, st.chat_msg) },
                             { "message", st.chat_msg.to_json_oaicompat() } };
        } catch (const std::exception & e) {
            out["reply"] = { { "error", e.what() } };
        }
        return out;
    }

    result_state st{ pp, "", {}, {} };
    json frames = json::array();
    auto push = [&](const json & delta, const json & fr) {
        frames.push_back({ { "delta", delta }, { "finish_reason", fr } });
    };
    try {
        st.update("", true);  // the begin result: updates the state, sends no chunk
        for (const auto & chunk : in.at("chunks")) {
            auto diffs = st.update(chunk.at(0).get<std::string>(), true);
            if (chunk.at(1).get<int>() == 1) {
                push({ { "role", "assistant" }, { "content", nullptr } }, nullptr);
            }
            for (const auto & d : diffs) {
                push(diff_to_json(d), nullptr);
            }
        }
        auto diffs = st.update("", false);
        for (const auto & d : diffs) {
            push(diff_to_json(d), nullptr);
        }
        push(json::object(), finish_reason(eos, st.chat_msg));
    } catch (const std::exception & e) {
        out["stream_error"] = e.what();
    }
    out["stream"] = frames;
    return out;
}

int main(int argc, char ** argv) {
    if (argc != 2) {
        std::cerr << "usage: llamacpp_harness TEMPLATE.jinja < requests.jsonl > answers.jsonl\n";
        return 2;
    }
    std::ifstream f(argv[1]);
    std::stringstream ss;
    ss << f.rdbuf();
    // gpt-oss GGUF: bos <|startoftext|>, eos <|return|>
    auto tmpls = common_chat_templates_init(nullptr, ss.str(), "<|startoftext|>", "<|return|>");
    std::string line;
    while (std::getline(std::cin, line)) {
        if (line.empty()) {
            continue;
        }
        json out;
        try {
            out = run_one(tmpls.get(), json::parse(line));
        } catch (const std::exception & e) {
            out = { { "error", e.what() } };
        }
        std::cout << out.dump() << "\n" << std::flush;
    }
    return 0;
}
