import { appendFileSync } from "node:fs"
const LOG = process.env.PROBE_LOG
const log = (obj) => appendFileSync(LOG, JSON.stringify(obj) + "\n")
export const Probe = async (ctx) => {
  log({ hook: "init", ctx: Object.keys(ctx || {}), directory: ctx && ctx.directory, worktree: ctx && ctx.worktree })
  return {
    event: async ({ event }) => {
      if (event && event.type === "session.created") {
        const i = event.properties.info
        log({ hook: "event", input: { event: { type: event.type, properties: { info: { id: i.id, parentID: i.parentID, directory: i.directory, title: i.title, agent: i.agent, version: i.version } } } } })
      }
    },
    "chat.params": async (input) => { log({ hook: "chat.params", input: { sessionID: input.sessionID, agent: input.agent, model: { id: input.model && input.model.id, providerID: input.model && input.model.providerID } } }) },
    "experimental.chat.system.transform": async (input, output) => { log({ hook: "system.transform", input: Object.keys(input||{}), sessionID: input && input.sessionID, hasSystem: Array.isArray(output && output.system) }) },
    "tool.execute.before": async (input, output) => {
      log({ hook: "tool.execute.before", input, output: JSON.parse(JSON.stringify(output)) })
      if (output.args && output.args.command === "echo ORIGINAL") output.args.command = "echo REPLACED"
      if (output.args && output.args.command === "echo BLOCKME") throw new Error("probe blocked this call")
    },
    "tool.execute.after": async (input, output) => {
      log({ hook: "tool.execute.after", input, output: JSON.parse(JSON.stringify(output)) })
    },
  }
}
