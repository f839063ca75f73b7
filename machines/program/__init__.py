"""The Pulumi program: a stack's configuration validated (``config``) and made into pools
(``components``), each cloud's part in its own package, registered in ``clouds``.

``__main__.py`` at the project's root only composes: ``deploy(load(stack_config(), stack))``.
"""
