import { GrowthBook } from "@growthbook/growthbook";
import type { FlagName } from "@tandem/shared/flags";
import { config } from "./config";
import type { SessionUser } from "./auth/requireUser";

const growthbook = new GrowthBook({
  apiHost: "https://cdn.growthbook.io",
  clientKey: config.GROWTHBOOK_CLIENT_KEY,
});
const ready = config.GROWTHBOOK_CLIENT_KEY ? growthbook.init({ streaming: true }) : Promise.resolve();

export const flags = {
  async isOn(name: FlagName, user: Pick<SessionUser, "id" | "memberships">): Promise<boolean> {
    await ready;
    const scoped = growthbook.createScopedInstance?.() ?? growthbook;
    scoped.setAttributes({ id: user.id, workspaceIds: user.memberships.map((m) => m.workspaceId) });
    return scoped.isOn(name);
  },
};
