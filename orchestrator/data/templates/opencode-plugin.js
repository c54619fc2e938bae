// orchestrator's plugin for @ORCH_AGENT@, written by `orch install @ORCH_AGENT@` (orch:managed). Commit it: it names no
// path of this machine. opencode loads every .opencode/plugin/*.js of the project, Kilo (an opencode fork) every
// .kilo/plugin/*.js; this one sends each tool call to orchestrator before it runs (tool.execute.before) and after
// (tool.execute.after), and BLOCKS it (throws: the host hands the model the error's message instead of running the
// tool) when orchestrator refuses it, or when orchestrator cannot be reached at all: fail closed, never "allow" on
// its own.
//
// One round trip per hook: the workspace daemon's socket (.orchestration/run/orch.sock, about a millisecond); when no
// daemon answers, the committed launcher .orchestration/bin/orch-hook, which finds this machine's interpreter,
// evaluates the call and starts a daemon for the next one (docs/adapters.md, "opencode"). Nothing here throws while
// the plugin loads: opencode skips a plugin whose loading fails, and its calls would then run ungoverned.
import { spawn } from "node:child_process"
import { createConnection } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

// @orch-include hook-wire.js

// the tool's metadata orchestrator reads after a call (never the tool's text output)
const RESULT_KEYS = ["exit", "exists", "isError"]
// helper agents whose model is not the one that calls tools
const SIDE_AGENTS = new Set(["title", "summary", "compaction"])

export const OrchestratorPlugin = async (ctx) => {
  const cwd = (ctx && (ctx.directory || ctx.worktree)) || process.cwd()
  const parents = new Map() // subagent session -> parent session (session.created events)
  const models = new Map() // session -> "<providerID>/<modelID>" of its last chat.params

  const rootOf = (session) => {
    let cur = session
    for (let i = 0; i < 32 && parents.has(cur); i++) cur = parents.get(cur)
    return cur
  }
  const base = (name, input, args) => {
    const root = rootOf(input.sessionID)
    const event = { hook_event_name: name, tool: input.tool, sessionID: root, callID: input.callID, args, cwd }
    if (root !== input.sessionID) event.subagent = input.sessionID
    const model = models.get(input.sessionID) || models.get(root)
    if (model) event.model = model
    return event
  }

  return {
    event: async ({ event }) => {
      const info = event && event.type === "session.created" && event.properties && event.properties.info
      if (info && info.id && info.parentID) parents.set(info.id, info.parentID)
    },
    "chat.params": async (input) => {
      const model = input && input.model
      if (model && model.id && !SIDE_AGENTS.has(input.agent)) models.set(input.sessionID, `${model.providerID}/${model.id}`)
    },
    "experimental.chat.system.transform": async (input, output) => {
      if (!input || !input.sessionID || !output || !Array.isArray(output.system)) return
      try {
        const answer = await ask({ hook_event_name: "session.context", sessionID: rootOf(input.sessionID), cwd })
        if (typeof answer.context === "string") output.system.push(answer.context)
      } catch {
        // the mandate is advice; the first tool call is refused with the reason if orchestrator is unreachable
      }
    },
    "tool.execute.before": async (input, output) => {
      const answer = await ask(base("tool.execute.before", input, output.args))
      if (answer.args && typeof answer.args === "object") Object.assign(output.args, answer.args)
    },
    "tool.execute.after": async (input, output) => {
      const metadata = (output && output.metadata) || {}
      const result = { title: output && output.title }
      for (const key of RESULT_KEYS) {
        if (key in metadata) result[key] = metadata[key]
        else if (output && key in output) result[key] = output[key]
      }
      const answer = await ask({ ...base("tool.execute.after", input, input.args), result })
      if (typeof answer.warning === "string" && output && typeof output.output === "string") {
        output.output += `\n\n${answer.warning}`
      }
    },
  }
}
