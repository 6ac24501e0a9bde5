import { NavLink } from "react-router-dom";
import { useTranslation } from "react-i18next";
import { FolderKanban, Inbox, Settings } from "lucide-react";
import { useProjects } from "../api/queries/useProjects";
import { cn } from "../lib/cn";
import { SkeletonList } from "./ui/Skeleton";
import { QueryError } from "./ui/QueryError";

interface SidebarProps {
  workspaceId: string;
}

const linkClass = ({ isActive }: { isActive: boolean }) =>
  cn(
    "flex items-center gap-2 rounded-control px-2 py-1.5 text-sm focus-visible:outline-none focus-visible:ring-2 focus-visible:ring-accent",
    isActive ? "bg-accent/10 font-medium text-accent" : "text-muted hover:bg-surface-raised hover:text-fg",
  );

export function Sidebar({ workspaceId }: SidebarProps) {
  const { t } = useTranslation("common");
  const { projects, isLoading, error, refetch } = useProjects(workspaceId);

  return (
    <nav aria-label={t("sidebar.label")} className="flex h-full w-60 flex-col gap-6 border-r border-subtle bg-canvas p-3">
      <div className="flex flex-col gap-1">
        <NavLink to="/inbox" className={linkClass}>
          <Inbox aria-hidden className="h-4 w-4" />
          {t("sidebar.inbox")}
        </NavLink>
      </div>

      <section aria-labelledby="sidebar-projects" className="flex flex-col gap-1">
        <h2 id="sidebar-projects" className="px-2 text-xs font-semibold uppercase tracking-wide text-subtle">
          {t("sidebar.projects")}
        </h2>
        {isLoading && <SkeletonList rows={4} />}
        {error && <QueryError error={error} onRetry={() => void refetch()} />}
        <ul className="flex flex-col gap-0.5">
          {projects.map((project) => (
            <li key={project.id}>
              <NavLink to={`/projects/${project.id}`} className={linkClass}>
                <FolderKanban aria-hidden className="h-4 w-4" />
                <span className="truncate">{project.name}</span>
              </NavLink>
            </li>
          ))}
        </ul>
      </section>

      <div className="mt-auto">
        <NavLink to="/settings/notifications" className={linkClass}>
          <Settings aria-hidden className="h-4 w-4" />
          {t("sidebar.settings")}
        </NavLink>
      </div>
    </nav>
  );
}
