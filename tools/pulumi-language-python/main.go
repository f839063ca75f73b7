// Command pulumi-language-python is a minimal Python language host for the
// Pulumi engine, built by scripts/install-pulumi.
//
// Why it exists: the upstream language host lives in its own Go module
// (github.com/pulumi/pulumi/sdk/python/cmd/pulumi-language-python/v3), which
// the Go module proxy reachable from this project's machines does not serve.
// The parts it is built from are served, though: the gRPC protocol, the
// Python toolchain helpers (virtualenv/pip/poetry/uv resolution) in
// github.com/pulumi/pulumi/sdk/v3, and the `pulumi-language-python-exec` shim
// that ships inside that module. This program is the small piece of glue in
// between: it serves the LanguageRuntime gRPC service and, for Run, starts
// `python -u pulumi-language-python-exec ...` in the project's virtualenv,
// exactly the contract the shim expects.
//
// Not implemented (they answer "unimplemented"): code generation, templates,
// packing SDKs and running plugins written in Python. Required plugins are
// not reported up front; the engine loads providers on demand when the
// program registers a resource, at the version the Python SDK asks for.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/pulumi/pulumi/sdk/v3/go/common/util/cmdutil"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/logging"
	"github.com/pulumi/pulumi/sdk/v3/go/common/util/rpcutil"
	pulumirpc "github.com/pulumi/pulumi/sdk/v3/proto/go"
	"github.com/pulumi/pulumi/sdk/v3/python/toolchain"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/types/known/emptypb"
	"google.golang.org/protobuf/types/known/structpb"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.0.0-dev"

// userActionableExit is the exit code the exec shim uses after it has already
// shown the user a message; the engine should then not add its own.
const userActionableExit = 32

func main() {
	var tracing string
	flag.StringVar(&tracing, "tracing", "", "Emit tracing to a Zipkin-compatible tracing endpoint")
	var executor string
	flag.StringVar(&executor, "use-executor", "", "Path of the pulumi-language-python-exec shim")
	// Accepted for compatibility with the upstream host's command line.
	_ = flag.String("root", "", "Project root (unused)")
	_ = flag.String("binary", "", "Unused")

	flag.Parse()
	logging.InitLogging(false, 0, false)
	cmdutil.InitTracing("pulumi-language-python", "pulumi-language-python", tracing)

	shim, err := findShim(executor)
	if err != nil {
		cmdutil.Exit(err)
	}

	engineAddress := ""
	if args := flag.Args(); len(args) > 0 {
		engineAddress = args[0]
	}

	host := &pythonHost{shim: shim, engineAddress: engineAddress, tracing: tracing}
	handle, err := rpcutil.ServeWithOptions(rpcutil.ServeOptions{
		Init: func(srv *grpc.Server) error {
			pulumirpc.RegisterLanguageRuntimeServer(srv, host)
			return nil
		},
		Options: rpcutil.OpenTracingServerInterceptorOptions(nil),
	})
	if err != nil {
		cmdutil.Exit(fmt.Errorf("could not start language host RPC server: %w", err))
	}
	// The engine reads the port from the first line of stdout.
	fmt.Printf("%d\n", handle.Port)
	if err := <-handle.Done; err != nil {
		cmdutil.Exit(fmt.Errorf("language host RPC stopped serving: %w", err))
	}
}

// findShim locates pulumi-language-python-exec: the flag, then beside this
// binary, then on PATH.
func findShim(given string) (string, error) {
	if given != "" {
		return given, nil
	}
	const name = "pulumi-language-python-exec"
	if self, err := os.Executable(); err == nil {
		if resolved, err := filepath.EvalSymlinks(self); err == nil {
			self = resolved
		}
		candidate := filepath.Join(filepath.Dir(self), name)
		if _, err := os.Stat(candidate); err == nil {
			return candidate, nil
		}
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("could not find %s beside the language host or on PATH: %w", name, err)
	}
	return p, nil
}

type pythonHost struct {
	pulumirpc.UnimplementedLanguageRuntimeServer

	shim          string
	engineAddress string
	tracing       string
}

func (h *pythonHost) Handshake(ctx context.Context,
	req *pulumirpc.LanguageHandshakeRequest,
) (*pulumirpc.LanguageHandshakeResponse, error) {
	if req.GetEngineAddress() != "" {
		h.engineAddress = req.GetEngineAddress()
	}
	return &pulumirpc.LanguageHandshakeResponse{}, nil
}

func (h *pythonHost) GetPluginInfo(context.Context, *emptypb.Empty) (*pulumirpc.PluginInfo, error) {
	return &pulumirpc.PluginInfo{Version: version}, nil
}

func (h *pythonHost) GetRequiredPlugins(context.Context,
	*pulumirpc.GetRequiredPluginsRequest,
) (*pulumirpc.GetRequiredPluginsResponse, error) {
	return &pulumirpc.GetRequiredPluginsResponse{}, nil
}

func (h *pythonHost) GetRequiredPackages(context.Context,
	*pulumirpc.GetRequiredPackagesRequest,
) (*pulumirpc.GetRequiredPackagesResponse, error) {
	return &pulumirpc.GetRequiredPackagesResponse{}, nil
}

func (h *pythonHost) RuntimeOptionsPrompts(context.Context,
	*pulumirpc.RuntimeOptionsRequest,
) (*pulumirpc.RuntimeOptionsResponse, error) {
	return &pulumirpc.RuntimeOptionsResponse{}, nil
}

// resolveToolchain maps the `runtime.options` of Pulumi.yaml (virtualenv,
// toolchain) onto the SDK's toolchain helpers.
func resolveToolchain(info *pulumirpc.ProgramInfo) (toolchain.Toolchain, error) {
	opts := toolchain.PythonOptions{Toolchain: toolchain.Pip}
	if info != nil {
		opts.Root = info.GetRootDirectory()
		opts.ProgramDir = info.GetProgramDirectory()
		opts.Virtualenv = stringOption(info.GetOptions(), "virtualenv")
		switch strings.ToLower(stringOption(info.GetOptions(), "toolchain")) {
		case "", "pip":
			opts.Toolchain = toolchain.Pip
		case "poetry":
			opts.Toolchain = toolchain.Poetry
		case "uv":
			opts.Toolchain = toolchain.Uv
		default:
			return nil, fmt.Errorf("unsupported python toolchain %q",
				stringOption(info.GetOptions(), "toolchain"))
		}
	}
	if opts.Root == "" {
		opts.Root, _ = os.Getwd()
	}
	if opts.ProgramDir == "" {
		opts.ProgramDir = opts.Root
	}
	return toolchain.ResolveToolchain(opts)
}

func stringOption(s *structpb.Struct, key string) string {
	if s == nil {
		return ""
	}
	if v, ok := s.GetFields()[key]; ok {
		return v.GetStringValue()
	}
	return ""
}

func (h *pythonHost) Run(ctx context.Context, req *pulumirpc.RunRequest) (*pulumirpc.RunResponse, error) {
	tc, err := resolveToolchain(req.GetInfo())
	if err != nil {
		return nil, err
	}
	if err := tc.ValidateVenv(ctx); err != nil {
		return nil, err
	}

	program := req.GetProgram()
	if info := req.GetInfo(); info != nil && info.GetEntryPoint() != "" {
		program = filepath.Join(info.GetProgramDirectory(), info.GetEntryPoint())
	}
	if program == "" {
		program = "."
	}

	args := []string{"-u", h.shim}
	add := func(k, v string) {
		if v != "" {
			args = append(args, "--"+k, v)
		}
	}
	add("monitor", req.GetMonitorAddress())
	add("engine", h.engineAddress)
	add("project", req.GetProject())
	add("stack", req.GetStack())
	add("pwd", req.GetPwd())
	add("dry_run", fmt.Sprintf("%v", req.GetDryRun()))
	add("parallel", fmt.Sprint(req.GetParallel()))
	add("tracing", h.tracing)
	add("organization", req.GetOrganization())
	if info := req.GetInfo(); info != nil {
		add("root_directory", info.GetRootDirectory())
	}
	args = append(args, program)
	args = append(args, req.GetArgs()...)

	cmd, err := tc.Command(ctx, args...)
	if err != nil {
		return nil, err
	}
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	if cfg := req.GetConfig(); cfg != nil {
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("serializing config: %w", err)
		}
		env = append(env, "PULUMI_CONFIG="+string(b))
	}
	if keys := req.GetConfigSecretKeys(); keys != nil {
		b, err := json.Marshal(keys)
		if err != nil {
			return nil, fmt.Errorf("serializing secret keys: %w", err)
		}
		env = append(env, "PULUMI_CONFIG_SECRET_KEYS="+string(b))
	}
	cmd.Env = env
	cmd.Stdout = os.Stdout
	cmd.Stderr = os.Stderr
	logging.V(5).Infof("language host launching: %s %s", cmd.Path, strings.Join(args, " "))

	if err := cmd.Run(); err != nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			if exitErr.ExitCode() == userActionableExit {
				return &pulumirpc.RunResponse{Bail: true}, nil
			}
			return &pulumirpc.RunResponse{
				Error: fmt.Sprintf("Program exited with non-zero exit code: %d", exitErr.ExitCode()),
			}, nil
		}
		return &pulumirpc.RunResponse{
			Error: fmt.Sprintf("Problem executing program (could not run language executor): %v", err),
		}, nil
	}
	return &pulumirpc.RunResponse{}, nil
}

type streamWriter struct {
	send   func(*pulumirpc.InstallDependenciesResponse) error
	stderr bool
}

func (w streamWriter) Write(p []byte) (int, error) {
	data := append([]byte(nil), p...)
	resp := &pulumirpc.InstallDependenciesResponse{Stdout: data}
	if w.stderr {
		resp = &pulumirpc.InstallDependenciesResponse{Stderr: data}
	}
	if err := w.send(resp); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (h *pythonHost) InstallDependencies(req *pulumirpc.InstallDependenciesRequest,
	server grpc.ServerStreamingServer[pulumirpc.InstallDependenciesResponse],
) error {
	tc, err := resolveToolchain(req.GetInfo())
	if err != nil {
		return err
	}
	dir := req.GetDirectory()
	if info := req.GetInfo(); info != nil && info.GetProgramDirectory() != "" {
		dir = info.GetProgramDirectory()
	}
	var out, errOut io.Writer = streamWriter{send: server.Send}, streamWriter{send: server.Send, stderr: true}
	return tc.InstallDependencies(server.Context(), dir, req.GetUseLanguageVersionTools(),
		true /*showOutput*/, out, errOut)
}

func (h *pythonHost) About(ctx context.Context, req *pulumirpc.AboutRequest) (*pulumirpc.AboutResponse, error) {
	tc, err := resolveToolchain(req.GetInfo())
	if err != nil {
		return nil, err
	}
	info, err := tc.About(ctx)
	if err != nil {
		return nil, err
	}
	return &pulumirpc.AboutResponse{
		Executable: info.PythonExecutable,
		Version:    info.PythonVersion.String(),
	}, nil
}

func (h *pythonHost) GetProgramDependencies(ctx context.Context,
	req *pulumirpc.GetProgramDependenciesRequest,
) (*pulumirpc.GetProgramDependenciesResponse, error) {
	tc, err := resolveToolchain(req.GetInfo())
	if err != nil {
		return nil, err
	}
	pkgs, err := tc.ListPackages(ctx, req.GetTransitiveDependencies())
	if err != nil {
		return nil, err
	}
	deps := make([]*pulumirpc.DependencyInfo, 0, len(pkgs))
	for _, p := range pkgs {
		deps = append(deps, &pulumirpc.DependencyInfo{Name: p.Name, Version: p.Version})
	}
	return &pulumirpc.GetProgramDependenciesResponse{Dependencies: deps}, nil
}
