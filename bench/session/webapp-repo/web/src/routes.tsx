import { createBrowserRouter, Navigate } from "react-router-dom";
import { AppShell } from "./layouts/AppShell";
import { RequireAuth } from "./layouts/RequireAuth";
import { RouteError } from "./layouts/RouteError";

export const router = createBrowserRouter([
  { path: "/login", lazy: () => import("./pages/Login").then((m) => ({ Component: m.LoginPage })) },
  { path: "/welcome", lazy: () => import("./pages/Welcome").then((m) => ({ Component: m.WelcomePage })) },
  {
    element: <RequireAuth />,
    errorElement: <RouteError />,
    children: [
      {
        element: <AppShell />,
        children: [
          { index: true, element: <Navigate to="/inbox" replace /> },
          { path: "inbox", lazy: () => import("./pages/Inbox").then((m) => ({ Component: m.InboxPage })) },
          {
            path: "projects/:projectId",
            lazy: () => import("./pages/ProjectBoard").then((m) => ({ Component: m.ProjectBoardPage })),
          },
          {
            path: "projects/:projectId/tasks/:taskId",
            lazy: () => import("./pages/ProjectBoard").then((m) => ({ Component: m.ProjectBoardPage })),
          },
          {
            path: "settings/notifications",
            lazy: () => import("./pages/settings/Notifications").then((m) => ({ Component: m.NotificationsPage })),
          },
          {
            path: "settings/billing",
            lazy: () => import("./pages/settings/Billing").then((m) => ({ Component: m.BillingPage })),
          },
        ],
      },
    ],
  },
]);
